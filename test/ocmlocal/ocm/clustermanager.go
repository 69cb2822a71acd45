//go:build linux

package ocm

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

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// clusterManagerName is the ClusterManager clusteradm init creates.
const clusterManagerName = "cluster-manager"

// StartClusterManager does what `clusteradm init` does: it installs the
// cluster-manager operator and creates the ClusterManager, with gates as
// its registration feature gates (true: Enable, false: Disable). The hub
// kubelet runs the operator, and then the Deployments it creates
// (registration, placement, addon manager, and the registration, work and
// addon webhooks, which the API server reaches through their Services:
// package servicenet). It returns
// when the ClusterManager is applied, every hub Deployment runs and the
// registration webhook answers.
func (h *Hub) StartClusterManager(ctx context.Context, gates map[string]bool) error {
	start := time.Now()
	if err := h.installOperator(ctx, h.ControlPlane, "cluster-manager"); err != nil {
		return err
	}
	c, err := operatorClient(h.ControlPlane)
	if err != nil {
		return err
	}
	cm := &operatorv1.ClusterManager{
		ObjectMeta: metav1.ObjectMeta{Name: clusterManagerName},
		Spec: operatorv1.ClusterManagerSpec{
			RegistrationImagePullSpec: h.ocmImage("registration"),
			WorkImagePullSpec:         h.ocmImage("work"),
			PlacementImagePullSpec:    h.ocmImage("placement"),
			AddOnManagerImagePullSpec: h.ocmImage("addon-manager"),
			DeployOption:              operatorv1.ClusterManagerDeployOption{Mode: operatorv1.InstallModeDefault},
		},
	}
	if len(gates) > 0 {
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{
			FeatureGates: setFeatureGates(nil, gates),
		}
	}
	if err := client.IgnoreAlreadyExists(c.Create(ctx, cm)); err != nil {
		return fmt.Errorf("creating ClusterManager: %w", err)
	}
	if err := h.waitClusterManager(ctx, c); err != nil {
		return err
	}
	h.Progress("cluster-manager operator (OCM %s) applied the ClusterManager in %s: hub controllers and webhooks run", h.Version, process.Since(start))
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
func (h *Hub) waitClusterManager(ctx context.Context, c client.Client) error {
	err := process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		cm := &operatorv1.ClusterManager{}
		if err := c.Get(ctx, types.NamespacedName{Name: clusterManagerName}, cm); err != nil {
			return false, err
		}
		if !meta.IsStatusConditionTrue(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied) {
			return false, fmt.Errorf("ClusterManager not applied yet")
		}
		return h.clusterManagerRolledOut(ctx, c)
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
func (h *Hub) hubDeploymentsRun(ctx context.Context, c client.Client) (bool, error) {
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.InNamespace(hubNamespace)); err != nil {
		return false, err
	}
	if len(list.Items) == 0 {
		return false, fmt.Errorf("no Deployment in %s yet", hubNamespace)
	}
	for i := range list.Items {
		d := &list.Items[i]
		if p := h.Kubelet.Running(d.Namespace, d.Name); p == nil || !p.Runs(d) {
			return false, fmt.Errorf("deployment %s/%s not running at its current template", d.Namespace, d.Name)
		}
	}
	return true, nil
}

// SetFeatureGates changes the registration feature gates in the
// ClusterManager at run time (true: Enable, false: Disable; gates not named
// keep their mode), as editing the ClusterManager after `clusteradm init`
// does. The cluster-manager operator derives the registration controller's
// --feature-gates from them (a flag only where the mode differs from the
// gate's default) and rolls it; this returns once the operator has applied
// the change, the hub kubelet runs every hub Deployment at its new
// template and the restarted registration webhook answers. For example
// {"ClusterProfile": false} turns OCM's own ClusterProfile mirror off.
func (h *Hub) SetFeatureGates(ctx context.Context, gates map[string]bool) error {
	start := time.Now()
	c, err := operatorClient(h.ControlPlane)
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
		return h.clusterManagerRolledOut(ctx, c)
	})
	if err != nil {
		return fmt.Errorf("waiting for the cluster-manager operator to apply %v: %w", gates, err)
	}
	if err := waitRegistrationWebhook(ctx, c); err != nil {
		return err
	}
	h.Progress("hub feature gates %v applied by the operator in %s", gates, process.Since(start))
	return nil
}

// clusterManagerRolledOut tells whether the operator has applied the
// ClusterManager's current spec (its Deployments updated in the same sync
// that records the generation) and the kubelet runs every hub Deployment
// at its current template.
func (h *Hub) clusterManagerRolledOut(ctx context.Context, c client.Client) (bool, error) {
	cm := &operatorv1.ClusterManager{}
	if err := c.Get(ctx, types.NamespacedName{Name: clusterManagerName}, cm); err != nil {
		return false, err
	}
	if cm.Status.ObservedGeneration != cm.Generation || meta.IsStatusConditionTrue(cm.Status.Conditions, operatorv1.ConditionProgressing) {
		return false, fmt.Errorf("ClusterManager generation %d not applied yet", cm.Generation)
	}
	return h.hubDeploymentsRun(ctx, c)
}
