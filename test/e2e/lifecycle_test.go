//go:build linux

package e2e

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

const regionClaim = "region.open-cluster-management.io"

// TestClusterLifecycle joins a third cluster to the running hub and follows
// it through the bundle: its profile carries what its klusterlet reports
// (Kubernetes version, a ClusterClaim), a stopped klusterlet makes it
// unhealthy through the real lease path, and deleting its ManagedCluster
// removes its profiles and token copies.
func TestClusterLifecycle(t *testing.T) {
	ctx, g := begin(t)
	const name = "cluster3"
	c3, err := env.AddCluster(ctx, name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(prepareCluster(ctx, c3)).To(Succeed())
	managed, err := client.New(c3.Config, client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())
	claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: regionClaim},
		Spec: clusterv1alpha1.ClusterClaimSpec{Value: "eu-west-3"}}
	g.Expect(managed.Create(ctx, claim)).To(Succeed())

	g.Eventually(func(g Gomega) {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(consumerNS, name), p)).To(Succeed())
		g.Expect(p.Status.Version.Kubernetes).To(Equal("v1.35.4"))
		g.Expect(p.Status.Properties).To(ContainElement(And(HaveField("Name", regionClaim), HaveField("Value", "eu-west-3"))))
		g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)).To(BeTrue())
		g.Expect(hub.Get(ctx, key(consumerNS, name+"-"+msaName), &corev1.Secret{})).To(Succeed())
	}).Should(Succeed(), "the profile of the new cluster, and its token copy")

	// The hub declares a cluster lost after 5 lease durations without
	// renewal; a short lease keeps the wait short (the klusterlet renews at
	// the duration it reads from its ManagedCluster).
	g.Expect(hub.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"leaseDurationSeconds":4}}`)))).To(Succeed())
	g.Expect(env.StopKlusterlet(name)).To(Succeed())
	g.Eventually(func(g Gomega) metav1.ConditionStatus {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(consumerNS, name), p)).To(Succeed())
		cond := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
		g.Expect(cond).NotTo(BeNil())
		return cond.Status
	}).Should(BeElementOf(metav1.ConditionFalse, metav1.ConditionUnknown), "a cluster whose klusterlet stopped")

	// Deregistration, with the klusterlet back so that OCM can clean up.
	g.Expect(env.StartKlusterlet(name)).To(Succeed())
	g.Expect(hub.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		profiles := &cpv1alpha1.ClusterProfileList{}
		g.Expect(hub.List(ctx, profiles)).To(Succeed())
		for _, p := range profiles.Items {
			g.Expect(p.Name).NotTo(Equal(name), "profile %s/%s", p.Namespace, p.Name)
		}
		err := hub.Get(ctx, key(consumerNS, name+"-"+msaName), &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "token copy: %v", err)
	}).Should(Succeed(), "profiles and token copies of a deregistered cluster")
	g.Expect(env.StopKlusterlet(name)).To(Succeed())
}
