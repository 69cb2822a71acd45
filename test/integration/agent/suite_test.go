// Package agent_test runs the cluster-profile-agent in-process against two
// real control planes: a hub and a managed cluster. envtest has no
// controller-manager, scheduler or kubelet, so the tests create the Nodes
// (with their status) and the leader Leases those would maintain.
//
// Nodes, Leases and ClusterClaims are cluster-wide on the one managed
// cluster, so the tests run one after another and clean up after themselves.
package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var (
	hub, managed *framework.Env

	hubAddons    addonclientset.Interface
	managedKube  kubernetes.Interface
	managedClaim clusterclientset.Interface
)

// Timings of the agent under test: short, so that the suite takes seconds.
const (
	testPeriod       = 100 * time.Millisecond
	testWriteFloor   = time.Millisecond // effectively none; TestWritesAreSpacedByTheFloor sets one
	testStaleAfter   = time.Minute
	addonNamespace   = agentapi.DefaultInstallNamespace
	frameworkManager = "addon-framework" // stands in for OCM writing its own conditions
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if hub, err = framework.Start(framework.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "starting the hub:", err)
		return 1
	}
	defer stop("hub", hub)
	if managed, err = framework.Start(framework.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "starting the managed cluster:", err)
		return 1
	}
	defer stop("managed cluster", managed)
	if err := setUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func stop(name string, env *framework.Env) {
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the %s: %v\n", name, err)
	}
}

// setUp installs the ManagedClusterAddOn CRD on the hub (the framework does
// not) and builds the tests' own clients.
func setUp() error {
	ocmAPI, err := framework.ModuleDir("open-cluster-management.io/api")
	if err != nil {
		return err
	}
	crd := filepath.Join(ocmAPI, "addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml")
	if _, err := envtest.InstallCRDs(hub.Config, envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing the ManagedClusterAddOn CRD: %w", err)
	}
	if hubAddons, err = addonclientset.NewForConfig(hub.Config); err != nil {
		return err
	}
	if managedKube, err = kubernetes.NewForConfig(managed.Config); err != nil {
		return err
	}
	if managedClaim, err = clusterclientset.NewForConfig(managed.Config); err != nil {
		return err
	}
	_, err = managedKube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addonNamespace}}, metav1.CreateOptions{})
	return err
}

// agentRun describes one agent run; zero fields take the test defaults.
type agentRun struct {
	cluster   string
	hub       *rest.Config
	managed   *rest.Config
	tolerance int
	floor     time.Duration
	// period between the agent's rounds; zero: testPeriod.
	period time.Duration
	// addonNamespace is where the agent keeps its addon lease.
	addonNamespace string
	// probeAddr serves /healthz and /readyz; empty serves nothing.
	probeAddr string
}

// startAgent runs the agent as the binary does (agent.Setup on a manager
// with agent.ManagerOptions) until the test ends or stop is called; stop
// checks that the manager exits cleanly and promptly.
func startAgent(t *testing.T, r agentRun) (stop func()) {
	t.Helper()
	r = r.withDefaults()
	opts := agent.Options{
		ClusterName: r.cluster, AddonNamespace: r.addonNamespace, Period: r.period,
		LeaseStaleAfter: testStaleAfter, UnhealthyNodeTolerance: r.tolerance, MinWriteInterval: r.floor,
	}
	mgrOpts := agent.ManagerOptions(r.probeAddr)
	mgrOpts.Logger = log.Log.WithName("agent-" + r.cluster)
	mgr, err := ctrl.NewManager(unthrottled(r.managed), mgrOpts)
	if err != nil {
		t.Fatalf("creating the agent's manager: %v", err)
	}
	if err := agent.Setup(mgr, opts, unthrottled(r.hub)); err != nil {
		t.Fatalf("setting up the agent: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the agent's manager returned %v, want nil on shutdown", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("agent did not stop within 5s of its context ending")
		}
	}
	t.Cleanup(stop)
	return stop
}

func (r agentRun) withDefaults() agentRun {
	if r.hub == nil {
		r.hub = hub.Config
	}
	if r.managed == nil {
		r.managed = managed.Config
	}
	if r.floor == 0 {
		r.floor = testWriteFloor
	}
	if r.period == 0 {
		r.period = testPeriod
	}
	if r.addonNamespace == "" {
		r.addonNamespace = addonNamespace
	}
	if r.probeAddr == "" {
		r.probeAddr = "0"
	}
	return r
}

func unthrottled(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// createAddon creates the cluster namespace and the ManagedClusterAddOn on
// the hub, as the addon manager would, with the framework's Available
// condition already set by its own writer.
func createAddon(ctx context.Context, t *testing.T, cluster string) {
	t.Helper()
	framework.CreateNamespace(ctx, t, hub.Client, cluster)
	addon, err := hubAddons.AddonV1beta1().ManagedClusterAddOns(cluster).Create(ctx, &addonv1beta1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: agentapi.AddonName},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ManagedClusterAddOn %s/%s: %v", cluster, agentapi.AddonName, err)
	}
	addon.Status.Conditions = []metav1.Condition{frameworkAvailable}
	if _, err := hubAddons.AddonV1beta1().ManagedClusterAddOns(cluster).UpdateStatus(ctx, addon,
		metav1.UpdateOptions{FieldManager: frameworkManager}); err != nil {
		t.Fatalf("setting the framework's condition on %s: %v", cluster, err)
	}
}

var frameworkAvailable = metav1.Condition{
	Type: "Available", Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated",
	Message: "cluster-profile-agent add-on is available.", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
}

func getAddon(g Gomega, ctx context.Context, cluster string) *addonv1beta1.ManagedClusterAddOn {
	addon, err := hubAddons.AddonV1beta1().ManagedClusterAddOns(cluster).Get(ctx, agentapi.AddonName, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return addon
}

// conditionOf returns a condition of the cluster's ManagedClusterAddOn, or nil.
func conditionOf(g Gomega, ctx context.Context, cluster, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(getAddon(g, ctx, cluster).Status.Conditions, conditionType)
}

// expectCondition waits until the condition has the status and reason and
// its message contains every fragment, and returns it.
func expectCondition(t *testing.T, ctx context.Context, cluster, conditionType string, status metav1.ConditionStatus,
	reason string, fragments ...string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	NewWithT(t).Eventually(func(g Gomega) {
		c := conditionOf(g, ctx, cluster, conditionType)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		for _, f := range fragments {
			g.Expect(c.Message).To(ContainSubstring(f))
		}
		got = *c
	}, framework.Timeout, framework.Interval).Should(Succeed())
	return got
}

// createNode creates a Node and then its status, as a kubelet would, and
// deletes it when the test ends.
func createNode(ctx context.Context, t *testing.T, w *agenttest.NodeWrapper) {
	t.Helper()
	node := w.Obj()
	status := node.Status.DeepCopy()
	created, err := managedKube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Node %s: %v", node.Name, err)
	}
	t.Cleanup(func() {
		if err := managedKube.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Node %s: %v", node.Name, err)
		}
	})
	created.Status = *status
	if _, err := managedKube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of Node %s: %v", node.Name, err)
	}
}

// setNodeCondition changes one condition of a Node through the status subresource.
func setNodeCondition(ctx context.Context, t *testing.T, name string, conditionType corev1.NodeConditionType, status corev1.ConditionStatus) {
	t.Helper()
	node, err := managedKube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading Node %s: %v", name, err)
	}
	w := &agenttest.NodeWrapper{Node: *node}
	if _, err := managedKube.CoreV1().Nodes().UpdateStatus(ctx, w.Condition(conditionType, status).Obj(), metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of Node %s: %v", name, err)
	}
}

// putLease creates or renews a leader Lease in kube-system, as the
// controller-manager or the scheduler would, and deletes it when the test ends.
func putLease(ctx context.Context, t *testing.T, component string, renewed time.Time) {
	t.Helper()
	leases := managedKube.CoordinationV1().Leases(agent.LeaseNamespace)
	existing, err := leases.Get(ctx, component, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := leases.Create(ctx, agenttest.MakeLease(agent.LeaseNamespace, component, renewed), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating Lease %s: %v", component, err)
		}
		t.Cleanup(func() { deleteLease(context.Background(), t, component) })
		return
	}
	if err != nil {
		t.Fatalf("reading Lease %s: %v", component, err)
	}
	existing.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
	if _, err := leases.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("renewing Lease %s: %v", component, err)
	}
}

func deleteLease(ctx context.Context, t *testing.T, component string) {
	err := managedKube.CoordinationV1().Leases(agent.LeaseNamespace).Delete(ctx, component, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Lease %s: %v", component, err)
	}
}

// freshControlPlane creates both leader Leases, just renewed.
func freshControlPlane(ctx context.Context, t *testing.T) {
	t.Helper()
	putLease(ctx, t, agent.ControllerManager, time.Now())
	putLease(ctx, t, agent.Scheduler, time.Now())
}

// cleanUpClaims removes every ClusterClaim when the test ends, after the
// agent has stopped (cleanups run last registered first, so call this
// before startAgent).
func cleanUpClaims(t *testing.T) {
	t.Cleanup(func() {
		ctx := context.Background()
		claims, err := managedClaim.ClusterV1alpha1().ClusterClaims().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("listing ClusterClaims: %v", err)
			return
		}
		for _, c := range claims.Items {
			if err := managedClaim.ClusterV1alpha1().ClusterClaims().Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting ClusterClaim %s: %v", c.Name, err)
			}
		}
	})
}

// claimsOnManaged returns every ClusterClaim by name.
func claimsOnManaged(g Gomega, ctx context.Context) map[string]clusterv1alpha1.ClusterClaim {
	list, err := managedClaim.ClusterV1alpha1().ClusterClaims().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]clusterv1alpha1.ClusterClaim{}
	for _, c := range list.Items {
		out[c.Name] = c
	}
	return out
}

// agentClaimValues returns the values of the claims carrying the agent's label.
func agentClaimValues(g Gomega, ctx context.Context) map[string]string {
	out := map[string]string{}
	for name, c := range claimsOnManaged(g, ctx) {
		if _, ok := c.Labels[agentapi.ClaimLabel]; ok && slices.Contains(agentapi.Claims, name) {
			out[name] = c.Spec.Value
		}
	}
	return out
}

// switchable is a transport in front of an API server that the test can
// cut off (every request fails as if nothing listened) and, for /readyz,
// answer with a report of its own.
type switchable struct {
	down   atomic.Bool
	readyz atomic.Pointer[string] // when set, /readyz answers 500 with this body
	// refused counts the requests that failed while down.
	refused atomic.Int64
}

func (s *switchable) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if s.down.Load() {
				s.refused.Add(1)
				return nil, errors.New("test: connection refused")
			}
			if body := s.readyz.Load(); body != nil && req.URL.Path == "/readyz" {
				return &http.Response{
					StatusCode: http.StatusInternalServerError, Request: req,
					Header: http.Header{"Content-Type": []string{"text/plain; charset=utf-8"}},
					Body:   readCloser{strings.NewReader(*body)},
				}, nil
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

// grantAddonStatus gives user, in namespace, exactly the hub rights the
// agent's identity has: its own ManagedClusterAddOn's status, nothing else.
func grantAddonStatus(ctx context.Context, t *testing.T, namespace, user string) {
	t.Helper()
	role := addon.HubRole()
	role.Namespace = namespace
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: agentapi.AddonName + "-agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := hub.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s/%s: %v", obj, namespace, obj.GetName(), err)
		}
	}
}

// userConfig returns a client configuration for a user of env with no
// rights beyond those granted to it.
func userConfig(t *testing.T, env *framework.Env, user string) *rest.Config {
	t.Helper()
	kubeconfig, err := env.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("loading the kubeconfig of %s: %v", user, err)
	}
	return cfg
}

// addonLease returns the agent's addon lease on the managed cluster.
func addonLease(g Gomega, ctx context.Context) *coordinationv1.Lease {
	l, err := managedKube.CoordinationV1().Leases(addonNamespace).Get(ctx, agentapi.AddonName, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return l
}
