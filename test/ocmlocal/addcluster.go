//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	e.progressf("%s added (control plane, klusterlet, kubelet, addons %v) in %s", name, addons, process.Since(start))
	return c, nil
}

// EnableAddonOn creates the addon's ManagedClusterAddOn in one cluster
// namespace, as `clusteradm addon enable --names <addon> --clusters
// <cluster>` does. One that exists is kept; one still being deleted is an
// error, since it would soon be gone.
func (e *Env) EnableAddonOn(ctx context.Context, addon, installNamespace, cluster string) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	mca := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon, Namespace: cluster,
		// v1beta1 has no installNamespace field; the annotation carries it
		// (the conversion webhook maps v1alpha1's spec.installNamespace to it).
		Annotations: map[string]string{addonv1beta1.InstallNamespaceAnnotation: installNamespace}}}
	err = hub.Create(ctx, mca)
	if apierrors.IsAlreadyExists(err) {
		// One being deleted would be gone once its finalizers are done.
		existing := &addonv1beta1.ManagedClusterAddOn{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(mca), existing); err != nil {
			return fmt.Errorf("enabling addon %s on %s: %w", addon, cluster, err)
		}
		if existing.DeletionTimestamp != nil {
			return fmt.Errorf("enabling addon %s on %s: its ManagedClusterAddOn is still being deleted", addon, cluster)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("enabling addon %s on %s: %w", addon, cluster, err)
	}
	return nil
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
