//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
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
	if err := e.register(ctx, c); err != nil {
		return nil, err
	}
	e.Clusters = append(e.Clusters, c)
	var addons []string
	if e.opts.ManagedServiceAccount {
		addons = append(addons, msaAddon)
	}
	if e.opts.ClusterProxy {
		addons = append(addons, proxyAddon)
	}
	for _, addon := range addons {
		if err := e.EnableAddonOn(ctx, addon, addonInstallNamespace, name); err != nil {
			return nil, err
		}
	}
	e.progressf("%s added (control plane, klusterlet, kubelet, addons %v) in %s", name, addons, since(start))
	return c, nil
}

// EnableAddonOn creates the addon's ManagedClusterAddOn in one cluster
// namespace, as `clusteradm addon enable --names <addon> --clusters
// <cluster>` does.
func (e *Env) EnableAddonOn(ctx context.Context, addon, installNamespace, cluster string) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	mca := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon, Namespace: cluster,
		// v1beta1 has no installNamespace field; the annotation carries it
		// (the conversion webhook maps v1alpha1's spec.installNamespace to it).
		Annotations: map[string]string{addonv1beta1.InstallNamespaceAnnotation: installNamespace}}}
	if err := createIgnoringExists(mca, hub.Create(ctx, mca)); err != nil {
		return fmt.Errorf("enabling addon %s on %s: %w", addon, cluster, err)
	}
	return nil
}
