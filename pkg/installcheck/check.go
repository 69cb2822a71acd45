// Package installcheck is what `helm test` runs (cmd/clusterprofile-check,
// in the chart's own image): it checks that an installed clusterprofile-manager
// is ready and leading, that the ClusterProfile API is served, and that the
// release's admission policies and bindings exist as the chart rendered
// them, with nothing but reads in the release namespace, discovery, and GETs
// of those policies and bindings by name. The manager runs the policy part
// (CheckPolicies) every minute for its metrics; this package stays free of
// controller-runtime so that linking it costs the manager nothing.
package installcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ClusterProfileGroupVersion is the API the check expects to be served.
const ClusterProfileGroupVersion = "multicluster.x-k8s.io/v1alpha1"

// Options say what to check.
type Options struct {
	Namespace  string
	Deployment string
	// Lease is the manager's leader election Lease in Namespace.
	Lease string
	// Timeout bounds the whole check; each step is retried until then.
	Timeout time.Duration
	// Interval is the pause between tries.
	Interval time.Duration
	// PoliciesFile is the chart's expected-policies file; empty: the
	// admission policies are not checked.
	PoliciesFile string
}

// Main parses args, connects (in-cluster, or --kubeconfig) and runs Check.
func Main(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("clusterprofile-check", flag.ContinueOnError)
	fs.SetOutput(out)
	opts := Options{Interval: time.Second}
	fs.StringVar(&opts.Namespace, "namespace", "", "The release namespace.")
	fs.StringVar(&opts.Deployment, "deployment", "", "The manager's Deployment.")
	fs.StringVar(&opts.Lease, "lease", "clusterprofile-manager.open-cluster-management.io", "The manager's leader election Lease.")
	fs.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "How long to wait for each condition in total.")
	fs.StringVar(&opts.PoliciesFile, "admission-policies-file", "",
		"The admission policies and bindings the chart rendered (a YAML stream); each must exist as rendered. Empty: not checked.")
	kubeconfig := fs.String("kubeconfig", "", "A kubeconfig; empty: the pod's ServiceAccount.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opts.Namespace == "" || opts.Deployment == "" {
		return errors.New("--namespace and --deployment are required")
	}
	var cfg *rest.Config
	var err error
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return Check(ctx, cs, opts, out)
}

// step is one thing the check waits for.
type step struct {
	name string
	run  func(context.Context) error
}

// Check runs the steps in order, each until it passes or the time is up,
// and reports each on out.
func Check(ctx context.Context, cs kubernetes.Interface, opts Options, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	steps := []step{
		{fmt.Sprintf("Deployment %s/%s has a ready replica", opts.Namespace, opts.Deployment), func(ctx context.Context) error {
			return deploymentReady(ctx, cs, opts)
		}},
		{fmt.Sprintf("a replica holds and renews Lease %s/%s", opts.Namespace, opts.Lease), leaderRenewing(cs, opts)},
		{"the ClusterProfile API (" + ClusterProfileGroupVersion + ") is served", func(ctx context.Context) error {
			return clusterProfilesServed(ctx, cs, opts.Namespace)
		}},
	}
	if opts.PoliciesFile != "" {
		get := RESTGetter(cs.AdmissionregistrationV1().RESTClient())
		steps = append(steps, step{"the release's admission policies and bindings exist as rendered", func(ctx context.Context) error {
			return policiesIntact(ctx, get, opts.PoliciesFile)
		}})
	}
	for _, step := range steps {
		var last error
		for {
			if last = step.run(ctx); last == nil {
				fmt.Fprintf(out, "ok: %s\n", step.name)
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("not true within %s: %s: %w", opts.Timeout, step.name, last)
			case <-time.After(opts.Interval):
			}
		}
	}
	return nil
}

func deploymentReady(ctx context.Context, cs kubernetes.Interface, opts Options) error {
	d, err := cs.AppsV1().Deployments(opts.Namespace).Get(ctx, opts.Deployment, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if d.Status.ObservedGeneration < d.Generation {
		return fmt.Errorf("generation %d not yet observed (%d)", d.Generation, d.Status.ObservedGeneration)
	}
	if d.Status.ReadyReplicas < 1 {
		return fmt.Errorf("%d of %d replicas ready", d.Status.ReadyReplicas, ptrValue(d.Spec.Replicas))
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status != "True" {
			return fmt.Errorf("not Available: %s", c.Message)
		}
	}
	return nil
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// leaderRenewing passes once the Lease has a holder and its renew time has
// moved since the first look: a live leader, whatever the clocks say.
func leaderRenewing(cs kubernetes.Interface, opts Options) func(context.Context) error {
	var first *metav1.MicroTime
	return func(ctx context.Context) error {
		l, err := cs.CoordinationV1().Leases(opts.Namespace).Get(ctx, opts.Lease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
			return errors.New("no holder")
		}
		if first == nil {
			first = l.Spec.RenewTime.DeepCopy()
			return errors.New("waiting for a renewal")
		}
		if l.Spec.RenewTime.Equal(first) {
			return fmt.Errorf("held by %s but not renewed since %s", *l.Spec.HolderIdentity, first.UTC().Format(time.RFC3339))
		}
		return nil
	}
}

func policiesIntact(ctx context.Context, get Getter, file string) error {
	expected, err := ReadPoliciesFile(file)
	if err != nil {
		return err
	}
	if problems := CheckPolicies(ctx, get, expected); len(problems) > 0 {
		return errors.New(strings.Join(ProblemLines(problems), "; "))
	}
	return nil
}

func clusterProfilesServed(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	resources, err := cs.Discovery().ServerResourcesForGroupVersion(ClusterProfileGroupVersion)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == "clusterprofiles" }) {
		return errors.New("clusterprofiles is not among the served resources")
	}
	return cs.Discovery().RESTClient().Get().AbsPath("/apis", ClusterProfileGroupVersion, "namespaces", namespace, "clusterprofiles").
		Param("limit", "1").Do(ctx).Error()
}
