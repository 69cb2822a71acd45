//go:build linux

package ocmlocal

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kueue"
)

// kueue installs and upgrades Kueue on the hub and the clusters that run
// now.
func (e *Env) kueueSetup() *kueue.Kueue {
	k := &kueue.Kueue{Hub: e.Hub, KubeletOf: e.kubeletOf, Helm: e.helm(), Progress: e.progressf}
	if e.Registry != nil {
		k.BundleRepository = e.Registry.BundleRepository
	}
	for _, c := range e.Clusters {
		k.Clusters = append(k.Clusters, c.ControlPlane)
	}
	return k
}

// startKueue installs Kueue on every managed cluster and on the hub,
// configured as the docs' MultiKueue recipe says (see package kueue), and
// waits until each manager leads.
func (e *Env) startKueue(ctx context.Context) error {
	if e.Registry == nil {
		return errors.New("the harness's Kueue needs Options.Registry: its pod copies cp-creds from the bundle's image, as the docs' recipe says")
	}
	if e.opts.ClusterProxy {
		// The profiles' open-cluster-management entry names the user
		// server on the host, or, written by cluster-proxy's own writer,
		// its Service.
		e.ReachUserServer(kueue.Namespace, kueue.Deployment)
	}
	return e.kueueSetup().Start(ctx, e.bins.Kueue)
}

// UpgradeKueue upgrades Kueue's chart on every managed cluster and on the
// hub to the release of bin/ocm/kueue-upgrade (Kueue's chart holds its
// CRDs as templates, so the upgrade moves them too), the hub's with the
// recipe's configuration for that release (kueue-manager-config-v0.19.yaml)
// as the chart's managerConfig, as the recipe says for Helm, and its patch
// put back; and waits until each manager of the new release leads. It
// returns the release.
func (e *Env) UpgradeKueue(ctx context.Context) (string, error) {
	return e.kueueSetup().Upgrade(ctx, e.bins.KueueUpgrade)
}

// MultiKueueClusterActive returns a MultiKueueCluster's Active condition
// on the hub, or nil while Kueue has written none.
func (e *Env) MultiKueueClusterActive(ctx context.Context, name string) (*metav1.Condition, error) {
	hub, err := e.hubClient()
	if err != nil {
		return nil, err
	}
	return kueue.MultiKueueClusterActive(ctx, hub, name)
}
