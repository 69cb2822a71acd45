//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// ForgetIssuedAddonCSRs deletes the hub's approved and issued CSRs of an
// addon, as kube-controller-manager's CSR cleaner does an hour after they
// were approved; the certificates they issued stay valid. OCM's
// registration agent requests no new certificate for an addon on a cluster
// that has ten CSRs on the hub, and each time an addon is enabled it may
// ask for up to three, so a suite that disables and enables an addon a few
// times within the hour would wait out the cleaner.
func (e *Env) ForgetIssuedAddonCSRs(ctx context.Context, addon string) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := hub.List(ctx, list, client.MatchingLabels{addonv1alpha1.AddonLabelKey: addon}); err != nil {
		return fmt.Errorf("listing the CSRs of addon %s: %w", addon, err)
	}
	for i := range list.Items {
		csr := &list.Items[i]
		approved := slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
			return c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue
		})
		if !approved || len(csr.Status.Certificate) == 0 {
			continue
		}
		if err := client.IgnoreNotFound(hub.Delete(ctx, csr, client.Preconditions{UID: &csr.UID})); err != nil {
			return fmt.Errorf("deleting CSR %s: %w", csr.Name, err)
		}
	}
	return nil
}
