//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"strconv"

	"golang.org/x/sync/errgroup"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/ocm"
)

func (e *Env) startClusters(ctx context.Context) error {
	e.Clusters = make([]*ManagedCluster, e.opts.Clusters)
	g, gctx := errgroup.WithContext(ctx)
	for i := range e.Clusters {
		g.Go(func() error {
			c, err := e.startManagedControlPlane(gctx, "cluster"+strconv.Itoa(i+1))
			e.Clusters[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(ctx)
	for _, c := range e.Clusters {
		g.Go(func() error { return e.ocmHub().Register(gctx, c.ControlPlane) })
	}
	return g.Wait()
}

// startManagedControlPlane starts a managed cluster's control plane, with
// kube-controller-manager (default service accounts, root CA ConfigMaps,
// garbage collection and namespace deletion, as on any cluster), and its
// kubelet.
func (e *Env) startManagedControlPlane(ctx context.Context, name string) (*ManagedCluster, error) {
	cp, err := e.startControlPlane(ctx, name, true)
	if err != nil {
		return nil, err
	}
	if _, err := e.startKubelet(cp); err != nil {
		return nil, err
	}
	return &ManagedCluster{ControlPlane: cp}, nil
}

// StopKlusterlet stops a cluster's klusterlet agent, e.g. to see the hub
// notice through the lease that the cluster is gone: the cluster's kubelet
// stops the agent's pod and keeps it stopped, as if its node were down (the
// Deployment stays, so the operator has nothing to repair). Its addons keep
// running.
func (e *Env) StopKlusterlet(cluster string) error {
	c := e.Cluster(cluster)
	if c == nil {
		return fmt.Errorf("no managed cluster %s", cluster)
	}
	e.kubeletOf(c.ControlPlane).Hold(ocm.KlusterletNamespace, ocm.KlusterletAgent)
	e.progressf("%s klusterlet stopped", cluster)
	return nil
}

// StartKlusterlet lets the kubelet run the agent again (a new pod); it
// finds its hub kubeconfig in hub-kubeconfig-secret, so no new CSR is
// needed.
func (e *Env) StartKlusterlet(cluster string) error {
	c := e.Cluster(cluster)
	if c == nil {
		return fmt.Errorf("no managed cluster %s", cluster)
	}
	k := e.kubeletOf(c.ControlPlane)
	if !k.IsHeld(ocm.KlusterletNamespace, ocm.KlusterletAgent) {
		return fmt.Errorf("the klusterlet of %s is running", cluster)
	}
	k.Release(ocm.KlusterletNamespace, ocm.KlusterletAgent)
	e.progressf("%s klusterlet started again", cluster)
	return nil
}
