//go:build linux

// Package kueue runs Kueue on the harness as the docs' MultiKueue recipe
// sets it up: Kueue's own Helm chart (the release's, from its module at the
// version hack/ocmlocal.sh built, recorded in bin/ocm/kueue-module.json) in
// kueue-system on every managed cluster, a worker, with the chart's own
// configuration, and on the hub with the recipe's configuration
// (MultiKueueClusterProfile on, the bundle's cp-creds as the credentials
// provider) and its patch (an initContainer copying cp-creds from the
// bundle's image). Each kubelet runs the chart's manager Deployment from
// bin/ocm/kueue; Kueue's internal cert management issues its webhook
// certificate, which reaches the pod through the Secret volume, and each
// API server reaches its webhooks and visibility API through the service
// network (package servicenet). Upgrade moves every cluster and the hub to
// the release of bin/ocm/kueue-upgrade, as a user upgrades Kueue's chart.
package kueue

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/charts"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/servicenet"
)

const (
	// Namespace is the chart's release namespace: where Kueue reads
	// ClusterProfiles and the Secrets its credentials plugin reads.
	Namespace    = "kueue-system"
	kueueRelease = "kueue"
	// Deployment is the chart's manager Deployment for release kueue.
	Deployment = kueueRelease + "-controller-manager"
	// kueueImage is the released image; the kubelets run bin/ocm/kueue (or
	// bin/ocm/kueue-upgrade, by its tag) for its /manager.
	kueueImage = "registry.k8s.io/kueue/kueue"
	// kueueLease is the chart configuration's leader election lease.
	kueueLease = "c1f6bfd2.kueue.x-k8s.io"
)

// ImageOf is the image of a Kueue release, which the kubelets map to the
// binary built for it.
func ImageOf(release binaries.Release) string { return kueueImage + ":" + release.Version }

// Kueue installs and upgrades Kueue on the hub and the managed clusters.
type Kueue struct {
	// Hub and Clusters are the control planes Kueue runs on, KubeletOf
	// returns the kubelet of each.
	Hub       *controlplane.ControlPlane
	Clusters  []*controlplane.ControlPlane
	KubeletOf func(*controlplane.ControlPlane) *kubelet.Kubelet
	// Helm installs and upgrades Kueue's chart.
	Helm charts.Helm
	// BundleRepository is the bundle image's repository in the local
	// registry, which the recipe's patch names as a mirror.
	BundleRepository string
	// Progress receives one line per step.
	Progress func(format string, args ...any)
}

// Start installs Kueue release on every managed cluster and on the hub,
// configured as the docs' MultiKueue recipe says
// (docs/examples/multikueue: kueue-manager-config.yaml as the hub chart's
// manager configuration, and kueue-controller-manager-cp-creds.yaml patched
// into its Deployment, the image named from the local registry as the
// recipe says a mirror is), and waits until each manager leads.
func (k *Kueue) Start(ctx context.Context, release binaries.Release) error {
	start := time.Now()
	// The open-cluster-management-direct entry, which the recipe lists
	// first, names each cluster's API server: Kueue's pod reaches them, as
	// on a hub whose pods reach the clusters' API servers.
	for _, c := range k.Clusters {
		k.KubeletOf(k.Hub).ReachPort(Namespace, Deployment, c.Port)
	}
	if err := k.runEverywhere(ctx, release, RecipeConfigFile, false); err != nil {
		return err
	}
	k.Progress("Kueue %s leads on the hub (MultiKueue with ClusterProfiles, as the docs' recipe configures it) and on %d workers, in %s",
		release.Version, len(k.Clusters), process.Since(start))
	return nil
}

// Upgrade upgrades Kueue's chart on every managed cluster and on the
// hub to release (bin/ocm/kueue-upgrade's) (Kueue's chart holds its
// CRDs as templates, so the upgrade moves them too), the hub's with the
// recipe's configuration for that release (kueue-manager-config-v0.19.yaml)
// as the chart's managerConfig, as the recipe says for Helm, and its patch
// put back; and waits until each manager of the new release leads. It
// returns the release.
func (k *Kueue) Upgrade(ctx context.Context, release binaries.Release) (string, error) {
	start := time.Now()
	if err := k.runEverywhere(ctx, release, RecipeConfigV019File, true); err != nil {
		return "", err
	}
	k.Progress("Kueue upgraded to %s on the hub and %d workers in %s", release.Version, len(k.Clusters), process.Since(start))
	return release.Version, nil
}

// runEverywhere installs or upgrades Kueue release on every managed
// cluster and on the hub at once, the hub's with the recipe's
// configuration file.
func (k *Kueue) runEverywhere(ctx context.Context, release binaries.Release, hubConfigFile string, upgrade bool) error {
	chart, err := chartrender.Load(filepath.Join(release.Dir, "charts", "kueue"))
	if err != nil {
		return err
	}
	hubConfig, err := recipeKueueConfig(hubConfigFile)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range k.Clusters {
		g.Go(func() error { return k.run(gctx, c, chart, release, "", upgrade) })
	}
	g.Go(func() error { return k.run(gctx, k.Hub, chart, release, hubConfig, upgrade) })
	return g.Wait()
}

// run installs (or upgrades to) Kueue release on a control plane with
// config as its manager configuration ("": the chart's own, as on a
// worker; the hub's Deployment also gets the recipe's patch), and waits
// until a manager started after that leads and serves the visibility API.
func (k *Kueue) run(ctx context.Context, cp *controlplane.ControlPlane, kueueChart *chart.Chart, release binaries.Release, config string, upgrade bool) error {
	values := map[string]any{
		"controllerManager": map[string]any{
			"manager": map[string]any{"image": map[string]any{
				"repository": kueueImage, "tag": release.Version, "pullPolicy": "IfNotPresent"}},
		},
	}
	if config != "" {
		values["managerConfig"] = map[string]any{"controllerManagerConfigYaml": config}
	}
	clientset, err := cp.Clientset()
	if err != nil {
		return err
	}
	leader, err := kueueLeader(ctx, clientset)
	if err != nil {
		return err
	}
	install := k.Helm.Install
	if upgrade {
		install = k.Helm.Upgrade
	}
	if err := install(ctx, cp, kueueChart, kueueRelease, Namespace, values); err != nil {
		return fmt.Errorf("installing Kueue on %s: %w", cp.Name, err)
	}
	if cp == k.Hub {
		if err := k.patchWithRecipe(ctx); err != nil {
			return err
		}
	}
	if err := kubelet.WaitDeploymentAvailable(ctx, cp, Namespace, Deployment); err != nil {
		return err
	}
	if err := servicenet.PublishEndpointSlice(ctx, k.KubeletOf(cp), Namespace, kueueVisibilityService); err != nil {
		return err
	}
	return waitLeads(ctx, cp, clientset, leader)
}

// kueueLeader is the holder of Kueue's leader lease on a control plane, ""
// while there is none.
func kueueLeader(ctx context.Context, c kubernetes.Interface) (string, error) {
	lease, err := c.CoordinationV1().Leases(Namespace).Get(ctx, kueueLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
}

// waitLeads waits until a Kueue manager other than before holds the
// leader lease on a control plane (it then runs its controllers, its
// webhook certificate mounted) and its visibility API is available: until
// then discovery there is partial, which stalls the garbage collector and
// namespace deletion.
func waitLeads(ctx context.Context, cp *controlplane.ControlPlane, c kubernetes.Interface, before string) error {
	err := process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		leader, err := kueueLeader(ctx, c)
		return leader != "" && leader != before, err
	})
	if err != nil {
		return fmt.Errorf("waiting for Kueue's manager to lead on %s: %w", cp.Name, err)
	}
	discovery, err := client.New(cp.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	for _, name := range kueueAPIServices {
		err := process.Poll(ctx, time.Minute, nil, func(ctx context.Context) (bool, error) {
			api := &unstructured.Unstructured{}
			api.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
			if err := discovery.Get(ctx, types.NamespacedName{Name: name}, api); err != nil {
				return false, err
			}
			return ConditionTrue(api, "Available"), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for Kueue's APIService %s on %s: %w", name, cp.Name, err)
		}
	}
	return nil
}

// kueueVisibilityService is the chart's Service of the visibility API.
const kueueVisibilityService = "kueue-visibility-server"

// kueueAPIServices are the chart's APIServices of Kueue's visibility API.
var kueueAPIServices = []string{"v1beta1.visibility.kueue.x-k8s.io", "v1beta2.visibility.kueue.x-k8s.io"}

// ConditionTrue tells whether an object's status has the condition True.
func ConditionTrue(u *unstructured.Unstructured, conditionType string) bool {
	c, err := StatusCondition(u, conditionType)
	return err == nil && c != nil && c.Status == metav1.ConditionTrue
}

// StatusCondition returns an object's status condition of that type, or nil.
func StatusCondition(u *unstructured.Unstructured, conditionType string) (*metav1.Condition, error) {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var conditions []metav1.Condition
	if err := json.Unmarshal(b, &conditions); err != nil {
		return nil, fmt.Errorf("conditions of %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return meta.FindStatusCondition(conditions, conditionType), nil
}
