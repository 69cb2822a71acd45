//go:build linux

package ocmlocal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// Kueue on the hub, as OCM's MultiKueue setup installs it: Kueue's own Helm
// chart (the release's, from its module at the version hack/ocmlocal.sh
// built, recorded in bin/ocm/kueue-module.json) in kueue-system, the
// MultiKueueClusterProfile feature gate on and the credentials providers of
// OCM's documentation (cp-creds with --managed-serviceaccount=multikueue);
// Kueue's CRDs on every managed cluster, as on a worker. The hub kubelet
// runs the chart's manager Deployment from bin/ocm/kueue; Kueue's internal
// cert management issues its webhook certificate, which reaches the pod
// through the Secret volume, and the API server reaches its webhooks and
// visibility API through the service network (servicenet.go).
const (
	// KueueNamespace is the chart's release namespace: where Kueue reads
	// ClusterProfiles and the Secrets its credentials plugin reads.
	KueueNamespace = "kueue-system"
	kueueRelease   = "kueue"
	// KueueDeployment is the chart's manager Deployment for release kueue.
	KueueDeployment = kueueRelease + "-controller-manager"
	// kueueImage is the released image; the hub kubelet runs bin/ocm/kueue
	// for its /manager.
	kueueImage = "registry.k8s.io/kueue/kueue"
	// kueueLease is the chart configuration's leader election lease.
	kueueLease      = "c1f6bfd2.kueue.x-k8s.io"
	kueueModuleFile = "kueue-module.json"
	// KueueFeatureGate turns on MultiKueue's ClusterProfile support
	// (alpha in Kueue v0.16, off by default).
	KueueFeatureGate = "MultiKueueClusterProfile"
)

// MultiKueueClusterGVK is the kind Kueue v0.16 serves and stores.
var MultiKueueClusterGVK = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "MultiKueueCluster"}

var kueuePrograms = []string{"kueue", kueueModuleFile}

// imagePlugin is the cp-creds a consumer runs: with Options.Registry the
// bundle image's /cp-creds, as a consumer's pod mounts it from the image
// (Kueue's and Argo CD's own images cannot be pulled here, so they run from
// their binaries and exec the plugin from the unpacked bundle image); else
// bin/cp-creds.
func (e *Env) imagePlugin() (string, error) {
	if e.Registry == nil {
		return filepath.Join(RepoRoot(), "bin", "cp-creds"), nil
	}
	img, err := e.pulled.get(e.Registry.BundleReference(), corev1.PullIfNotPresent)
	if err != nil {
		return "", err
	}
	return filepath.Join(img.Rootfs, "cp-creds"), nil
}

// startKueue installs Kueue's CRDs on the managed clusters and its chart on
// the hub, and waits until its manager leads.
func (e *Env) startKueue(ctx context.Context) error {
	start := time.Now()
	bases := filepath.Join(e.bins.kueue.Dir, "config", "components", "crd", "bases")
	for _, c := range e.Clusters {
		if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{Paths: []string{bases}, ErrorIfPathMissing: true}); err != nil {
			return fmt.Errorf("installing Kueue's CRDs on %s: %w", c.Name, err)
		}
	}
	chart, err := chartrender.Load(filepath.Join(e.bins.kueue.Dir, "charts", "kueue"))
	if err != nil {
		return err
	}
	if e.KueuePlugin, err = e.imagePlugin(); err != nil {
		return err
	}
	config, err := kueueManagerConfig(chart.Values, consumer.SeedProviders(e.KueuePlugin))
	if err != nil {
		return err
	}
	if e.opts.ClusterProxy {
		// The profiles' open-cluster-management entry names the user
		// server on the host, or, written by cluster-proxy's own writer,
		// its Service.
		e.ReachUserServer(KueueNamespace, KueueDeployment)
	}
	values := map[string]any{
		"controllerManager": map[string]any{
			"featureGates": []any{map[string]any{"name": KueueFeatureGate, "enabled": true}},
			"manager": map[string]any{"image": map[string]any{
				"repository": kueueImage, "tag": e.bins.kueue.Version, "pullPolicy": "IfNotPresent"}},
		},
		"managerConfig": map[string]any{"controllerManagerConfigYaml": config},
	}
	if err := e.InstallChart(ctx, chart, kueueRelease, KueueNamespace, values); err != nil {
		return err
	}
	if err := e.WaitDeploymentAvailable(ctx, KueueNamespace, KueueDeployment); err != nil {
		return err
	}
	if err := e.publishEndpointSlice(ctx, e.Hub, KueueNamespace, kueueVisibilityService); err != nil {
		return err
	}
	if err := e.waitKueueLeads(ctx); err != nil {
		return err
	}
	e.progressf("Kueue %s leads on the hub (MultiKueue with ClusterProfiles), its CRDs on %d clusters, in %s",
		e.bins.kueue.Version, len(e.Clusters), since(start))
	return nil
}

// kueueManagerConfig is the chart's default Configuration with the
// ClusterProfile credentials providers added and only batch/v1 Jobs
// integrated (no Pod or Deployment webhooks on the hub's own workloads).
func kueueManagerConfig(chartValues map[string]any, providers []access.Provider) (string, error) {
	manager, _ := chartValues["managerConfig"].(map[string]any)
	raw, _ := manager["controllerManagerConfigYaml"].(string)
	config := map[string]any{}
	if err := yaml.Unmarshal([]byte(raw), &config); err != nil || len(config) == 0 {
		return "", fmt.Errorf("the Kueue chart's managerConfig.controllerManagerConfigYaml (%v)", err)
	}
	config["integrations"] = map[string]any{"frameworks": []string{"batch/job"}}
	// Kueue's ClusterProfileCredentialsProvider: a name and client-go's
	// ExecConfig, as in access.Provider without its policies.
	var entries []any
	for _, p := range providers {
		entries = append(entries, map[string]any{"name": p.Name, "execConfig": p.ExecConfig})
	}
	config["multiKueue"] = map[string]any{"clusterProfile": map[string]any{"credentialsProviders": entries}}
	out, err := yaml.Marshal(config)
	return string(out), err
}

// waitKueueLeads waits until Kueue's manager holds its leader lease (it
// then runs its controllers, its webhook certificate mounted) and its
// visibility API is available: until then the hub's discovery is partial,
// which stalls the garbage collector and namespace deletion.
func (e *Env) waitKueueLeads(ctx context.Context) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	err = poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: KueueNamespace, Name: kueueLease}, lease); err != nil {
			return false, err
		}
		return ptr.Deref(lease.Spec.HolderIdentity, "") != "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Kueue's manager to lead: %w", err)
	}
	for _, name := range kueueAPIServices {
		err := poll(ctx, time.Minute, nil, func(ctx context.Context) (bool, error) {
			api := &unstructured.Unstructured{}
			api.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
			if err := hub.Get(ctx, types.NamespacedName{Name: name}, api); err != nil {
				return false, err
			}
			return conditionTrue(api, "Available"), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for Kueue's APIService %s: %w", name, err)
		}
	}
	return nil
}

// kueueVisibilityService is the chart's Service of the visibility API.
const kueueVisibilityService = "kueue-visibility-server"

// kueueAPIServices are the chart's APIServices of Kueue's visibility API.
var kueueAPIServices = []string{"v1beta1.visibility.kueue.x-k8s.io", "v1beta2.visibility.kueue.x-k8s.io"}

// conditionTrue tells whether an object's status has the condition True.
func conditionTrue(u *unstructured.Unstructured, conditionType string) bool {
	c, err := statusCondition(u, conditionType)
	return err == nil && c != nil && c.Status == metav1.ConditionTrue
}

// statusCondition returns an object's status condition of that type, or nil.
func statusCondition(u *unstructured.Unstructured, conditionType string) (*metav1.Condition, error) {
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

// readKueueModule reads the Kueue release hack/ocmlocal.sh built.
func readKueueModule(path string) (ocmRelease, error) {
	var m ocmRelease
	raw, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Version == "" || m.Dir == "" {
		return m, fmt.Errorf("%w: %s names no Kueue version and directory (%v); run `make ocm-binaries`", ErrBinariesMissing, path, err)
	}
	return m, nil
}

// NewMultiKueueCluster is a MultiKueueCluster that reaches a worker through
// its ClusterProfile in Kueue's namespace (spec.clusterSource.
// clusterProfileRef).
func NewMultiKueueCluster(name, profile string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(MultiKueueClusterGVK)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": profile}}}
	return u
}

// MultiKueueClusterActive returns a MultiKueueCluster's Active condition
// on the hub, or nil while Kueue has written none.
func (e *Env) MultiKueueClusterActive(ctx context.Context, name string) (*metav1.Condition, error) {
	hub, err := e.hubClient()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(MultiKueueClusterGVK)
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, u); err != nil {
		return nil, err
	}
	return statusCondition(u, "Active")
}
