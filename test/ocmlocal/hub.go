//go:build linux

package ocmlocal

import (
	"context"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/ocm"
)

// startHub brings up the hub as `clusteradm init` does: the control plane
// and its kubelet, the cluster-manager operator and a ClusterManager, and
// the bootstrap service account the klusterlets join with. The CRDs OCM
// does not own (ClusterProfile, the addons') are installed as their charts
// would.
func (e *Env) startHub(ctx context.Context) error {
	hub, err := e.startControlPlane(ctx, "hub", true)
	if err != nil {
		return err
	}
	e.Hub = hub
	if _, err := e.startKubelet(hub); err != nil {
		return err
	}
	h := e.ocmHub()
	if err := h.InstallCRDs(); err != nil {
		return err
	}
	if err := h.StartClusterManager(ctx, e.opts.RegistrationFeatureGates); err != nil {
		return err
	}
	return h.CreateBootstrapRBAC(ctx)
}

// ocmHub is OCM's hub as the ocm package sets it up.
func (e *Env) ocmHub() *ocm.Hub {
	return &ocm.Hub{ControlPlane: e.Hub, Kubelet: e.kubeletOf(e.Hub), Modules: e.modules, Version: e.bins.OCM.Version, Progress: e.progressf}
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
	return e.ocmHub().SetFeatureGates(ctx, gates)
}
