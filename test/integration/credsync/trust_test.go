package credsync_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// forge creates a ClusterProfile as anyone allowed to create one can: any
// name, any manager, our labels claiming cluster.
func forge(t *testing.T, namespace, name, manager, cluster string) {
	t.Helper()
	p := utiltesting.MakeClusterProfile(namespace, name, manager).Obj()
	p.Labels = map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
		"open-cluster-management.io/cluster-name": cluster, "multicluster.x-k8s.io/clusterset": "forge-set"}
	if err := env.Client.Create(framework.ContextFor(t), p); err != nil {
		t.Fatalf("forging ClusterProfile %s/%s: %v", namespace, name, err)
	}
}

// TestForgedProfilesGetNoToken plays somebody who may create ClusterProfiles
// and wants a cluster's token: forged profiles in namespaces nothing binds,
// and a second profile claiming a served cluster in its served namespace,
// get no copy; the served namespace keeps exactly one, owned by the mirror's
// profile throughout.
func TestForgedProfilesGetNoToken(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "forge-set", []string{"forge-c1"}, "forge-ns")
	for _, ns := range []string{"forge-unbound", "forge-unbound-2"} {
		framework.CreateNamespace(ctx, t, env.Client, ns)
	}
	forge(t, "forge-unbound", "forge-c1", "open-cluster-management", "forge-c1") // a perfect imitation
	forge(t, "forge-unbound-2", "forge-c1", "fleet", "forge-c1")                 // another manager's
	forge(t, "forge-ns", "forge-c1-shadow", "open-cluster-management", "forge-c1")
	createMSA(ctx, t, "forge-c1", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "forge-c1-multikueue", "forge-ns")

	profile := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Expect(env.Client.Get(ctx, keyOf("forge-ns", "forge-c1"), profile)).To(Succeed())
	NewWithT(t).Consistently(func(g Gomega) {
		list := &corev1.SecretList{}
		g.Expect(env.Client.List(ctx, list)).To(Succeed())
		var copies []string
		for _, s := range list.Items {
			// Only this test's namespaces: copies an earlier test left elsewhere have their own owners.
			if s.Labels["authentication.open-cluster-management.io/synced-from"] != "" && strings.HasPrefix(s.Namespace, "forge-") {
				copies = append(copies, s.Namespace+"/"+s.Name)
				g.Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", profile.UID)), "owner of %s/%s", s.Namespace, s.Name)
			}
		}
		g.Expect(copies).To(ContainElement("forge-ns/forge-c1-multikueue"))
		g.Expect(copies).NotTo(ContainElement(HavePrefix("forge-unbound")))
		g.Expect(copies).NotTo(ContainElement(ContainSubstring("shadow")))
	}, 3*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestABindingThatOptsOutPublishesNothing: a namespace that binds a set only
// for Placement (the publish annotation "false") gets no profile and no
// token; removing the annotation publishes both, adding it back revokes them.
func TestABindingThatOptsOutPublishesNothing(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("optout-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("optout-c1").ClusterSet("optout-set").Obj())
	framework.CreateNamespace(ctx, t, c, "optout-c1")
	framework.CreateNamespace(ctx, t, c, "optout-placement")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("optout-placement", "optout-set").Bound(true).
		Annotation(membership.AnnotationPublish, "false").Obj())
	createMSA(ctx, t, "optout-c1", "multikueue", "token-1", expiry, true)

	profileExists := func(g Gomega) bool {
		err := c.Get(ctx, keyOf("optout-placement", "optout-c1"), &cpv1alpha1.ClusterProfile{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return err == nil
	}
	NewWithT(t).Consistently(profileExists, 2*time.Second, 100*time.Millisecond).Should(BeFalse())
	expectCopiesIn(t, ctx, "optout-c1-multikueue")

	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "optout-placement", Name: "optout-set"}}
	framework.Update(ctx, t, c, binding, func(b *clusterv1beta2.ManagedClusterSetBinding) { b.Annotations = nil })
	NewWithT(t).Eventually(profileExists, framework.Timeout, framework.Interval).Should(BeTrue())
	expectCopiesIn(t, ctx, "optout-c1-multikueue", "optout-placement")

	framework.Update(ctx, t, c, binding, func(b *clusterv1beta2.ManagedClusterSetBinding) {
		b.Annotations = map[string]string{membership.AnnotationPublish: "false"}
	})
	expectCopiesIn(t, ctx, "optout-c1-multikueue")
	NewWithT(t).Eventually(profileExists, framework.Timeout, framework.Interval).Should(BeFalse())
}

// TestCopiesGoWhenTheNamespaceStopsServingWhileTheProfileLingers: with OCM's
// built-in mirror (here: a profile written by hand, held by another
// controller's finalizer) a profile may outlive its binding; the token must
// not.
func TestCopiesGoWhenTheNamespaceStopsServingWhileTheProfileLingers(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": false, "ClusterProfileCredSyncer": true}})
	framework.CreateNamespace(ctx, t, c, "linger-c1")
	framework.CreateNamespace(ctx, t, c, "linger-ns")
	framework.Serve(ctx, t, c, "linger-ns", "linger-c1")
	p := utiltesting.MakeClusterProfile("linger-ns", "linger-c1", "open-cluster-management").Obj()
	p.Finalizers = []string{"argocd.example.com/cluster-secret"}
	NewWithT(t).Expect(c.Create(ctx, p)).To(Succeed())
	t.Cleanup(func() {
		framework.Update(ctx, t, c, p, func(p *cpv1alpha1.ClusterProfile) { p.Finalizers = nil })
	})
	createMSA(ctx, t, "linger-c1", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "linger-c1-multikueue", "linger-ns")

	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "linger-ns", Name: "serve-linger-c1"}}
	NewWithT(t).Expect(c.Delete(ctx, binding)).To(Succeed())
	expectCopiesIn(t, ctx, "linger-c1-multikueue")
	NewWithT(t).Expect(c.Get(ctx, keyOf("linger-ns", "linger-c1"), &cpv1alpha1.ClusterProfile{})).To(Succeed(), "the profile lingers")
}

// TestAFreedNameGetsItsCopy: a copy whose name another Secret holds is
// reported and never overwritten; once that Secret goes away the copy is
// made, without waiting for any other change.
func TestAFreedNameGetsItsCopy(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "freed-set", []string{"freed-c1"}, "freed-ns")
	squatter := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "freed-ns", Name: "freed-c1-multikueue"},
		Data: map[string][]byte{"token": []byte("somebody else's")}}
	NewWithT(t).Expect(c.Create(ctx, squatter)).To(Succeed())
	createMSA(ctx, t, "freed-c1", "multikueue", "token-1", expiry, true)
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventsAbout(g, ctx, "ManagedServiceAccount", "multikueue", "SyncedSecretNameCollision")
	}, framework.Timeout, framework.Interval).ShouldNot(BeEmpty())
	NewWithT(t).Consistently(func(g Gomega) string {
		return string(syncedSecret(g, ctx, "freed-ns", "freed-c1-multikueue").Data["token"])
	}, time.Second, 100*time.Millisecond).Should(Equal("somebody else's"))

	NewWithT(t).Expect(c.Delete(ctx, squatter)).To(Succeed())
	freed := time.Now()
	NewWithT(t).Eventually(func(g Gomega) string {
		s := syncedSecret(g, ctx, "freed-ns", "freed-c1-multikueue")
		if s == nil {
			return ""
		}
		return string(s.Data["token"])
	}, 10*time.Second, framework.Interval).Should(Equal("token-1"))
	t.Logf("the copy appeared %s after its name was freed", time.Since(freed).Round(time.Millisecond))
}

// TestNoCopyInAManagedClusterNamespace: cluster B's agents hold Secret
// rights in B's hub namespace, so a binding there must not bring cluster A's
// token, even next to a profile someone else wrote (as OCM's built-in mirror
// does, here by hand with our mirror off). The copy goes the moment the
// namespace is labelled as B's.
func TestNoCopyInAManagedClusterNamespace(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": false, "ClusterProfileCredSyncer": true}})
	framework.CreateNamespace(ctx, t, c, "cnsync-a")
	clusterB := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cnsync-b"}}
	NewWithT(t).Expect(c.Create(ctx, clusterB)).To(Succeed())
	framework.Serve(ctx, t, c, "cnsync-b", "cnsync-a")
	NewWithT(t).Expect(c.Create(ctx, utiltesting.MakeClusterProfile("cnsync-b", "cnsync-a", "open-cluster-management").Obj())).To(Succeed())
	createMSA(ctx, t, "cnsync-a", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "cnsync-a-multikueue", "cnsync-b")

	framework.Update(ctx, t, c, clusterB, func(ns *corev1.Namespace) {
		ns.Labels = map[string]string{"open-cluster-management.io/cluster-name": "cnsync-b"}
	})
	expectCopiesIn(t, ctx, "cnsync-a-multikueue")
	NewWithT(t).Consistently(func(g Gomega) []string {
		found, err := framework.SecretNamespaces(ctx, c, "cnsync-a-multikueue")
		g.Expect(err).NotTo(HaveOccurred())
		return found
	}, 2*time.Second, 100*time.Millisecond).Should(BeEmpty())
}
