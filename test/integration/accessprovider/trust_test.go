package accessprovider_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestOnlyProfilesTheHubPublishesGetAnEntry plays somebody who may create
// ClusterProfiles and forges them to get the server and CA of a cluster:
// entries go only on the profile named after a cluster in a namespace whose
// Bound, publishing binding selects it, whatever labels a profile carries.
// The mirror is off, as with OCM's built-in mirror: the rule holds for
// profiles anyone publishes.
func TestOnlyProfilesTheHubPublishesGetAnEntry(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	for _, ns := range []string{"trust-ns", "trust-unbound", "trust-unbound-2"} {
		framework.CreateNamespace(ctx, t, c, ns)
	}
	served := createProfile(ctx, t, "trust-ns", "trust-c1")
	framework.UpdateCluster(ctx, t, c, "trust-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.trust-c1.example.com:6443", CABundle: utiltesting.FakeCA("CA-D")}}
	})
	// A perfect imitation in a namespace nothing binds.
	createUnservedProfile(ctx, t, "trust-unbound", "trust-c1")
	// Our labels on another manager's profile, in another unbound namespace.
	otherManager := utiltesting.MakeClusterProfile("trust-unbound-2", "trust-c1", "fleet").Obj()
	otherManager.Labels = map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management", "open-cluster-management.io/cluster-name": "trust-c1"}
	NewWithT(t).Expect(c.Create(ctx, otherManager)).To(Succeed())
	// A second profile claiming the served cluster, in the served namespace.
	shadow := createUnservedProfile(ctx, t, "trust-ns", "trust-c1-shadow")
	framework.Update(ctx, t, c, shadow, func(p *cpv1alpha1.ClusterProfile) { p.Labels["open-cluster-management.io/cluster-name"] = "trust-c1" })
	framework.StartManager(t, env, framework.ManagerOptions{Gates: bothGates})

	expectEntries(t, ctx, "trust-ns", "trust-c1", "open-cluster-management", "open-cluster-management-direct")
	forgeriesGetNothing := func() {
		t.Helper()
		NewWithT(t).Consistently(func(g Gomega) {
			for _, key := range [][2]string{{"trust-unbound", "trust-c1"}, {"trust-unbound-2", "trust-c1"}, {"trust-ns", "trust-c1-shadow"}} {
				p := getProfile(g, ctx, key[0], key[1])
				g.Expect(p.Status.AccessProviders).To(BeEmpty(), "%s/%s", key[0], key[1])
				g.Expect(p.Status.Conditions).To(BeEmpty(), "%s/%s", key[0], key[1])
			}
		}, 2*time.Second, 100*time.Millisecond).Should(Succeed())
	}
	forgeriesGetNothing()

	// Labels grant nothing, and removing them takes nothing away.
	framework.Update(ctx, t, c, served, func(p *cpv1alpha1.ClusterProfile) { p.Labels = nil })
	NewWithT(t).Consistently(func(g Gomega) int {
		return len(getProfile(g, ctx, "trust-ns", "trust-c1").Status.AccessProviders)
	}, time.Second, 100*time.Millisecond).Should(Equal(2))

	// The binding stops being Bound while the profile lingers (no mirror
	// deletes it here): both entries and the condition go at once.
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "trust-ns", Name: "serve-trust-c1"}}
	setBound := func(status metav1.ConditionStatus) {
		framework.UpdateStatus(ctx, t, c, binding, func(b *clusterv1beta2.ManagedClusterSetBinding) {
			b.Status.Conditions = []metav1.Condition{{Type: clusterv1beta2.ClusterSetBindingBoundType, Status: status,
				Reason: "Test", LastTransitionTime: metav1.Now()}}
		})
	}
	setBound(metav1.ConditionFalse)
	expectEntries(t, ctx, "trust-ns", "trust-c1")
	NewWithT(t).Eventually(func(g Gomega) []metav1.Condition {
		return getProfile(g, ctx, "trust-ns", "trust-c1").Status.Conditions
	}, framework.Timeout, framework.Interval).Should(BeEmpty())
	setBound(metav1.ConditionTrue)
	expectEntries(t, ctx, "trust-ns", "trust-c1", "open-cluster-management", "open-cluster-management-direct")

	// A binding that opts out of publishing serves Placement only.
	setPublish := func(value *string) {
		framework.Update(ctx, t, c, binding, func(b *clusterv1beta2.ManagedClusterSetBinding) {
			if value == nil {
				delete(b.Annotations, membership.AnnotationPublish)
				return
			}
			b.Annotations = map[string]string{membership.AnnotationPublish: *value}
		})
	}
	off := "false"
	setPublish(&off)
	expectEntries(t, ctx, "trust-ns", "trust-c1")
	setPublish(nil)
	expectEntries(t, ctx, "trust-ns", "trust-c1", "open-cluster-management", "open-cluster-management-direct")
	forgeriesGetNothing()
}
