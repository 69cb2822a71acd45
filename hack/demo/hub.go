package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

const (
	// existingHubPrefix starts the name of everything the demo creates on a
	// hub it did not start, so that it can tell its objects from the user's.
	existingHubPrefix = "demo-"
	// existingHubManagerName is the cluster manager name the manager runs
	// with on such a hub: with OCM's default name it would take over (and
	// delete, when unwanted) profiles that OCM's own mirror once wrote.
	existingHubManagerName = "demo-open-cluster-management"
)

// hub is the control plane the demo runs against.
type hub struct {
	client client.Client
	// existing is true when the hub comes from KUBECONFIG.
	existing bool
	// prefix starts the names of the demo's objects.
	prefix string
	// managerName is the cluster manager name the manager writes on profiles.
	managerName string
	// kubeconfig is the file the manager and kubectl are given; empty on an
	// existing hub, where they read KUBECONFIG as the demo did.
	kubeconfig string
	// dir holds the demo's files (bin/demo).
	dir string
}

// connectHub starts a local control plane, or connects to the hub named by
// KUBECONFIG when that is set.
func connectHub(ctx context.Context, cleanups *cleanupStack) (*hub, error) {
	dir := filepath.Join(framework.RepoRoot(), "bin", "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	if kubeconfig := os.Getenv("KUBECONFIG"); kubeconfig != "" {
		return connectExistingHub(ctx, kubeconfig, dir)
	}
	return startLocalHub(ctx, dir, cleanups)
}

func startLocalHub(ctx context.Context, dir string, cleanups *cleanupStack) (*hub, error) {
	fmt.Println("Starting a local control plane (kube-apiserver and etcd from bin/envtest)...")
	started := time.Now()
	env, err := framework.Start(framework.Options{})
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", err)
	}
	cleanups.push("stopping the local control plane", env.Stop)
	if ctx.Err() != nil { // interrupted while starting, which takes a few seconds
		return nil, context.Cause(ctx)
	}
	version, err := serverVersion(env.Config)
	if err != nil {
		return nil, err
	}
	fmt.Printf("    kube-apiserver %s up in %s, with the OCM and ClusterProfile CRDs installed\n", version, since(started))
	kubeconfig, err := env.AdminKubeconfig()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	fmt.Printf("    admin kubeconfig written to %s\n", displayPath(path))
	return &hub{
		client: env.Client, managerName: clusterprofile.DefaultManagerName, kubeconfig: path, dir: dir,
	}, nil
}

func connectExistingHub(ctx context.Context, kubeconfig, dir string) (*hub, error) {
	fmt.Printf("NOTICE: KUBECONFIG is set (%s), so the demo uses that hub instead of starting a local control plane.\n", kubeconfig)
	fmt.Printf("        It creates only objects named %s*, runs the manager with --cluster-manager-name=%s,\n", existingHubPrefix, existingHubManagerName)
	fmt.Println("        and deletes its objects at the end. Unset KUBECONFIG to run on a local control plane.")
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading KUBECONFIG: %w", err)
	}
	version, err := serverVersion(cfg)
	if err != nil {
		return nil, err
	}
	fmt.Printf("    hub %s runs kube-apiserver %s\n", cfg.Host, version)
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", cfg.Host, err)
	}
	if err := checkAPIsServed(c); err != nil {
		return nil, err
	}
	if err := checkBuiltInMirrorOff(ctx, c); err != nil {
		return nil, err
	}
	return &hub{
		client: c, existing: true, prefix: existingHubPrefix, managerName: existingHubManagerName, dir: dir,
	}, nil
}

func serverVersion(cfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("creating a discovery client for %s: %w", cfg.Host, err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("reaching the API server at %s: %w", cfg.Host, err)
	}
	return info.GitVersion, nil
}

// requiredAPIs are the kinds the demo and the manager use, by CRD name.
var requiredAPIs = []struct {
	crd string
	gvk schema.GroupVersionKind
}{
	{"managedclusters.cluster.open-cluster-management.io", kindOf(clusterv1.GroupVersion, "ManagedCluster")},
	{"managedclustersets.cluster.open-cluster-management.io", kindOf(clusterv1beta2.GroupVersion, "ManagedClusterSet")},
	{"managedclustersetbindings.cluster.open-cluster-management.io", kindOf(clusterv1beta2.GroupVersion, "ManagedClusterSetBinding")},
	{clusterprofile.CRDName, cpv1alpha1.GroupVersion.WithKind("ClusterProfile")},
}

// kindOf names a kind of an OCM API group, whose GroupVersion is metav1's.
func kindOf(gv metav1.GroupVersion, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind}
}

// checkAPIsServed names every required CRD the hub does not serve.
func checkAPIsServed(c client.Client) error {
	var missing []string
	for _, api := range requiredAPIs {
		served, err := isServed(c, api.gvk)
		if err != nil {
			return err
		}
		if !served {
			missing = append(missing, fmt.Sprintf("%s (%s)", api.crd, api.gvk.GroupVersion()))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the hub lacks CRDs the demo needs: %s", strings.Join(missing, ", "))
	}
	return nil
}

func isServed(c client.Client, gvk schema.GroupVersionKind) (bool, error) {
	_, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking up %s on the hub: %w", gvk, err)
	}
	return true, nil
}

// checkBuiltInMirrorOff fails when OCM's own ClusterProfile mirror is on:
// clusterprofile-manager would then stay passive and nothing would converge.
func checkBuiltInMirrorOff(ctx context.Context, c client.Client) error {
	served, err := isServed(c, kindOf(operatorv1.GroupVersion, "ClusterManager"))
	if err != nil || !served {
		return err
	}
	managers := &operatorv1.ClusterManagerList{}
	if err := c.List(ctx, managers); err != nil {
		return fmt.Errorf("listing ClusterManagers: %w", err)
	}
	for i := range managers.Items {
		if coexistence.EnablesBuiltInMirror(&managers.Items[i]) {
			return fmt.Errorf("ClusterManager %s enables OCM's built-in ClusterProfile mirror, so clusterprofile-manager would stay passive; "+
				"disable that gate or run the demo without KUBECONFIG", managers.Items[i].Name)
		}
	}
	return nil
}

// since formats the time elapsed since start for narration.
func since(start time.Time) string {
	return time.Since(start).Round(10 * time.Millisecond).String()
}

// displayPath shows path relative to the working directory when it is below it.
func displayPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return rel
}
