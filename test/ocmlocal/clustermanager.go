//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	// clusterManagerName is the ClusterManager clusteradm init creates.
	clusterManagerName = "cluster-manager"
	// ocmImageRepository is where OCM publishes its images; the kubelet maps
	// them, at the built release only, to the local binaries.
	ocmImageRepository = "quay.io/open-cluster-management/"
)

// ocmImage is the image of one of OCM's programs at the built release.
func (e *Env) ocmImage(name string) string {
	return ocmImageRepository + name + ":" + e.bins.OCM.Version
}

// ocmImages map OCM's images, at the built release, to the binaries built
// from it: the operators and the klusterlet agent (registration-operator),
// and the hub Deployments a ClusterManager creates.
func (e *Env) ocmImages() []ImageBinary {
	var images []ImageBinary
	for _, m := range []struct{ command, image, binary string }{
		{"/registration-operator", "registration-operator", "registration-operator"},
		{"/registration", "registration", "registration"},
		{"/work", "work", "work"},
		{"/placement", "placement", "placement"},
		{"/addon", "addon-manager", "addon"},
	} {
		images = append(images, ImageBinary{Command: m.command, ImageContains: e.ocmImage(m.image), Path: e.bins.Path(m.binary)})
	}
	return images
}

// operatorClient is an admin client of a control plane (this bundle's
// scheme knows OCM's operator API).
func operatorClient(cp *ControlPlane) (client.Client, error) {
	return client.New(cp.Config, client.Options{Scheme: scheme.New()})
}

// startClusterManager does what `clusteradm init` does: it installs the
// cluster-manager operator and creates the ClusterManager, with the
// registration feature gates of the options. The hub kubelet runs the
// operator, and then the Deployments it creates (registration, placement,
// addon manager, and the registration, work and addon webhooks, which the
// API server reaches through their Services: servicenet.go). It returns
// when the ClusterManager is applied, every hub Deployment runs and the
// registration webhook answers.
func (e *Env) startClusterManager(ctx context.Context) error {
	start := time.Now()
	if err := e.installOperator(ctx, e.Hub, "cluster-manager"); err != nil {
		return err
	}
	c, err := operatorClient(e.Hub)
	if err != nil {
		return err
	}
	cm := &operatorv1.ClusterManager{
		ObjectMeta: metav1.ObjectMeta{Name: clusterManagerName},
		Spec: operatorv1.ClusterManagerSpec{
			RegistrationImagePullSpec: e.ocmImage("registration"),
			WorkImagePullSpec:         e.ocmImage("work"),
			PlacementImagePullSpec:    e.ocmImage("placement"),
			AddOnManagerImagePullSpec: e.ocmImage("addon-manager"),
			DeployOption:              operatorv1.ClusterManagerDeployOption{Mode: operatorv1.InstallModeDefault},
		},
	}
	if len(e.opts.RegistrationFeatureGates) > 0 {
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{
			FeatureGates: setFeatureGates(nil, e.opts.RegistrationFeatureGates),
		}
	}
	if err := createIgnoringExists(cm, c.Create(ctx, cm)); err != nil {
		return fmt.Errorf("creating ClusterManager: %w", err)
	}
	if err := e.waitClusterManager(ctx, c); err != nil {
		return err
	}
	e.progressf("cluster-manager operator (OCM %s) applied the ClusterManager in %s: hub controllers and webhooks run", e.bins.OCM.Version, process.Since(start))
	return nil
}

// setFeatureGates sets each gate's mode in a ClusterManager's list (true:
// Enable, false: Disable), keeping the others, in name order for new ones.
func setFeatureGates(list []operatorv1.FeatureGate, gates map[string]bool) []operatorv1.FeatureGate {
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		mode := operatorv1.FeatureGateModeTypeDisable
		if gates[name] {
			mode = operatorv1.FeatureGateModeTypeEnable
		}
		i := slices.IndexFunc(list, func(g operatorv1.FeatureGate) bool { return g.Feature == name })
		if i < 0 {
			list = append(list, operatorv1.FeatureGate{Feature: name, Mode: mode})
			continue
		}
		list[i].Mode = mode
	}
	return list
}

// waitClusterManager waits until the operator has applied the current
// spec (Applied, no Deployment rolling), the kubelet runs every hub
// Deployment at its current template, and the registration webhook admits
// a ManagedCluster (a dry run): the API server reaches it through its
// Service.
func (e *Env) waitClusterManager(ctx context.Context, c client.Client) error {
	err := process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		cm := &operatorv1.ClusterManager{}
		if err := c.Get(ctx, types.NamespacedName{Name: clusterManagerName}, cm); err != nil {
			return false, err
		}
		if !meta.IsStatusConditionTrue(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied) {
			return false, fmt.Errorf("ClusterManager not applied yet")
		}
		return e.clusterManagerRolledOut(ctx, c)
	})
	if err != nil {
		return fmt.Errorf("waiting for the cluster-manager operator: %w", err)
	}
	return waitRegistrationWebhook(ctx, c)
}

// waitRegistrationWebhook waits until the registration webhook answers (a
// dry-run create it validates): its pod runs before it listens, and the
// service network routes to a running pod, not to a ready one.
func waitRegistrationWebhook(ctx context.Context, c client.Client) error {
	probe := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "ocmlocal-webhook-probe"}}
	err := process.Poll(ctx, time.Minute, nil, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the registration webhook: %w", err)
	}
	return nil
}

// hubDeploymentsRun tells whether the kubelet runs every Deployment in the
// hub namespace at its current template.
func (e *Env) hubDeploymentsRun(ctx context.Context, c client.Client) (bool, error) {
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.InNamespace(hubNamespace)); err != nil {
		return false, err
	}
	if len(list.Items) == 0 {
		return false, fmt.Errorf("no Deployment in %s yet", hubNamespace)
	}
	k := e.kubeletOf(e.Hub)
	for i := range list.Items {
		d := &list.Items[i]
		if p := k.Running(d.Namespace, d.Name); p == nil || !p.Runs(d) {
			return false, fmt.Errorf("deployment %s/%s not running at its current template", d.Namespace, d.Name)
		}
	}
	return true, nil
}

// SetHubFeatureGates changes the registration feature gates in the
// ClusterManager at run time (true: Enable, false: Disable; gates not named
// keep their mode), as editing the ClusterManager after `clusteradm init`
// does. The cluster-manager operator derives the registration controller's
// --feature-gates from them (a flag only where the mode differs from the
// gate's default) and rolls it; this returns once the operator has applied
// the change, the hub kubelet runs every hub Deployment at its new
// template and the restarted registration webhook answers. For example
// {"ClusterProfile": false} turns OCM's own ClusterProfile mirror off.
func (e *Env) SetHubFeatureGates(ctx context.Context, gates map[string]bool) error {
	start := time.Now()
	c, err := operatorClient(e.Hub)
	if err != nil {
		return err
	}
	// The operator writes the ClusterManager too (its finalizer, its
	// status): read it again when it changed in between.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &operatorv1.ClusterManager{}
		if err := c.Get(ctx, types.NamespacedName{Name: clusterManagerName}, cm); err != nil {
			return fmt.Errorf("reading ClusterManager: %w", err)
		}
		if cm.Spec.RegistrationConfiguration == nil {
			cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{}
		}
		cm.Spec.RegistrationConfiguration.FeatureGates = setFeatureGates(cm.Spec.RegistrationConfiguration.FeatureGates, gates)
		return c.Update(ctx, cm)
	})
	if err != nil {
		return fmt.Errorf("updating ClusterManager: %w", err)
	}
	err = process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		return e.clusterManagerRolledOut(ctx, c)
	})
	if err != nil {
		return fmt.Errorf("waiting for the cluster-manager operator to apply %v: %w", gates, err)
	}
	if err := waitRegistrationWebhook(ctx, c); err != nil {
		return err
	}
	e.progressf("hub feature gates %v applied by the operator in %s", gates, process.Since(start))
	return nil
}

// clusterManagerRolledOut tells whether the operator has applied the
// ClusterManager's current spec (its Deployments updated in the same sync
// that records the generation) and the kubelet runs every hub Deployment
// at its current template.
func (e *Env) clusterManagerRolledOut(ctx context.Context, c client.Client) (bool, error) {
	cm := &operatorv1.ClusterManager{}
	if err := c.Get(ctx, types.NamespacedName{Name: clusterManagerName}, cm); err != nil {
		return false, err
	}
	if cm.Status.ObservedGeneration != cm.Generation || meta.IsStatusConditionTrue(cm.Status.Conditions, operatorv1.ConditionProgressing) {
		return false, fmt.Errorf("ClusterManager generation %d not applied yet", cm.Generation)
	}
	return e.hubDeploymentsRun(ctx, c)
}
