//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"

	"golang.org/x/sync/errgroup"
)

const (
	msaAddon = "managed-serviceaccount"
	// addonInstallNamespace is where addon agents run on managed clusters
	// (what `clusteradm addon enable` picks by default).
	addonInstallNamespace = "open-cluster-management-agent-addon"
	// addonHubNamespace is where the addons' hub parts live (their charts'
	// release namespace).
	addonHubNamespace = "open-cluster-management-addon"
)

// startAddons starts each addon's hub side and enables
// the addon on every cluster as `clusteradm addon enable` does. The addons
// come up side by side: most of their start-up is waiting for the addon
// lease to be seen.
func (e *Env) startAddons(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	if e.opts.ClusterProxy {
		g.Go(func() error { return e.startClusterProxy(gctx) })
	}
	if e.opts.ManagedServiceAccount {
		g.Go(func() error { return e.startManagedServiceAccount(gctx) })
	}
	return g.Wait()
}

// startManagedServiceAccount runs the addon's hub manager as its chart does
// (Deployment mode) and enables the addon on every cluster.
func (e *Env) startManagedServiceAccount(ctx context.Context) error {
	start := time.Now()
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	cma := &addonv1beta1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: msaAddon},
		Spec: addonv1beta1.ClusterManagementAddOnSpec{
			AddOnMeta:       addonv1beta1.AddOnMeta{DisplayName: msaAddon, Description: msaAddon},
			InstallStrategy: addonv1beta1.InstallStrategy{Type: addonv1beta1.AddonInstallStrategyManual},
		},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addonHubNamespace}}
	if err := createIgnoringExists(ns, hub.Create(ctx, ns)); err != nil {
		return fmt.Errorf("creating namespace %s: %w", addonHubNamespace, err)
	}
	if err := createIgnoringExists(cma, hub.Create(ctx, cma)); err != nil {
		return fmt.Errorf("creating ClusterManagementAddOn %s: %w", msaAddon, err)
	}
	if _, err := e.procs.start(processSpec{
		name: "hub-managed-serviceaccount-manager",
		argv: []string{e.bins.path("msa"), "manager",
			"--deploy-mode=Deployment",
			"--agent-image-name=quay.io/open-cluster-management/managed-serviceaccount:v0.10.0",
			// Fixed ports by default (:38080, :38081); not needed here.
			"--metrics-bind-address=0", "--health-probe-bind-address=0"},
		// NAMESPACE: the release namespace, which a pod would read from its
		// service account files.
		env: []string{"KUBECONFIG=" + e.Hub.KubeconfigPath, "NAMESPACE=" + addonHubNamespace},
	}); err != nil {
		return err
	}
	if err := e.EnableAddon(ctx, msaAddon, addonInstallNamespace); err != nil {
		return err
	}
	if err := e.waitAddonsAvailable(ctx, msaAddon); err != nil {
		return err
	}
	e.progressf("managed-serviceaccount available on %d clusters in %s", len(e.Clusters), since(start))
	return nil
}

// EnableAddon creates the addon's ManagedClusterAddOn in every cluster
// namespace, as `clusteradm addon enable --names <addon>` does.
func (e *Env) EnableAddon(ctx context.Context, addon, installNamespace string) error {
	for _, c := range e.Clusters {
		if err := e.enableAddonOn(ctx, addon, installNamespace, c.Name); err != nil {
			return err
		}
	}
	return nil
}

// WaitAddonAvailable waits until the addon is Available on every cluster.
func (e *Env) WaitAddonAvailable(ctx context.Context, addon string) error {
	return e.waitAddonsAvailable(ctx, addon)
}

func (e *Env) waitAddonsAvailable(ctx context.Context, addon string) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	for _, c := range e.Clusters {
		err := poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
			mca := &addonv1beta1.ManagedClusterAddOn{}
			if err := hub.Get(ctx, types.NamespacedName{Namespace: c.Name, Name: addon}, mca); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1beta1.ManagedClusterAddOnConditionAvailable), nil
		})
		if err != nil {
			return fmt.Errorf("addon %s on %s not available: %w", addon, c.Name, err)
		}
	}
	return nil
}
