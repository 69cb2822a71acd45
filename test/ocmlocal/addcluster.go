//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/addons"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// AddCluster brings up one more managed cluster after Start, as a platform
// engineer joins a cluster to a running hub: its control plane and kubelet,
// its klusterlet (operator and agent) registered through the bootstrap →
// CSR flow and accepted, and the addons the environment runs enabled on it.
func (e *Env) AddCluster(ctx context.Context, name string) (*ManagedCluster, error) {
	if e.Cluster(name) != nil {
		return nil, fmt.Errorf("managed cluster %s exists", name)
	}
	start := time.Now()
	c, err := e.startManagedControlPlane(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := e.ocmHub().Register(ctx, c.ControlPlane); err != nil {
		return nil, err
	}
	e.Clusters = append(e.Clusters, c)
	var enabled []string
	if e.opts.ManagedServiceAccount {
		enabled = append(enabled, addons.MSA)
	}
	if e.opts.ClusterProxy {
		enabled = append(enabled, addons.ClusterProxy)
	}
	for _, addon := range enabled {
		if err := e.EnableAddonOn(ctx, addon, addons.InstallNamespace, name); err != nil {
			return nil, err
		}
	}
	e.progressf("%s added (control plane, klusterlet, kubelet, addons %v) in %s", name, enabled, process.Since(start))
	return c, nil
}
