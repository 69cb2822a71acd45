package credsync_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var expiry = time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC)

func TestCopiesTheTokenNextToEveryProfileOfTheCluster(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "copy-set", []string{"copy-c1"}, "copy-kueue", "copy-argocd")
	createMSA(ctx, t, "copy-c1", "multikueue", "token-1", expiry, true)
	createMSA(ctx, t, "copy-c1", "unsynced", "token-x", expiry, false)

	expectCopiesIn(t, ctx, "copy-c1-multikueue", "copy-argocd", "copy-kueue")
	expectCopiesIn(t, ctx, "copy-c1-unsynced")
	NewWithT(t).Eventually(func(g Gomega) {
		s := syncedSecret(g, ctx, "copy-kueue", "copy-c1-multikueue")
		g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
		g.Expect(s.Data).To(Equal(map[string][]byte{"token": []byte("token-1"), "ca.crt": []byte("CA of copy-c1")}))
		g.Expect(s.Labels).To(HaveKeyWithValue("authentication.open-cluster-management.io/synced-from", "copy-c1-multikueue"))
		g.Expect(s.Annotations).To(Equal(map[string]string{
			"authentication.open-cluster-management.io/synced-from-cluster":                "copy-c1",
			"authentication.open-cluster-management.io/synced-from-managed-serviceaccount": "multikueue",
			"authentication.open-cluster-management.io/token-expiration":                   "2027-03-04T05:06:07Z",
			// No access provider runs: the copy may go to no server.
			"clusterprofile.open-cluster-management.io/published-servers": "[]",
			"clusterprofile.open-cluster-management.io/unscoped":          "true",
		}))
		profile := &cpv1alpha1.ClusterProfile{}
		g.Expect(env.Client.Get(ctx, keyOf("copy-kueue", "copy-c1"), profile)).To(Succeed())
		g.Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", profile.UID)))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestRotationEditsAndDeletionsAreFollowed(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "rot-set", []string{"rot-c1"}, "rot-a", "rot-b")
	msa := createMSA(ctx, t, "rot-c1", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "rot-c1-multikueue", "rot-a", "rot-b")
	token := func(g Gomega, ns string) string {
		s := syncedSecret(g, ctx, ns, "rot-c1-multikueue")
		g.Expect(s).NotTo(BeNil())
		return string(s.Data["token"])
	}

	// The agent rotates the token.
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "rot-c1", Name: "multikueue"}}
	framework.Update(ctx, t, c, source, func(s *corev1.Secret) { s.Data["token"] = []byte("token-2") })
	later := expiry.Add(24 * time.Hour)
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.ExpirationTimestamp = &metav1.Time{Time: later}
	})
	NewWithT(t).Eventually(func(g Gomega) {
		for _, ns := range []string{"rot-a", "rot-b"} {
			g.Expect(token(g, ns)).To(Equal("token-2"))
			g.Expect(syncedSecret(g, ctx, ns, "rot-c1-multikueue").Annotations).
				To(HaveKeyWithValue("authentication.open-cluster-management.io/token-expiration", "2027-03-05T05:06:07Z"))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Someone edits one copy and deletes the other: both are repaired.
	framework.Update(ctx, t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "rot-a", Name: "rot-c1-multikueue"}},
		func(s *corev1.Secret) { s.Data["token"] = []byte("tampered") })
	NewWithT(t).Expect(c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "rot-b", Name: "rot-c1-multikueue"}})).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(token(g, "rot-a")).To(Equal("token-2"))
		g.Expect(token(g, "rot-b")).To(Equal("token-2"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Removing the sync label revokes every copy; putting it back restores them.
	framework.Update(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) { m.Labels = nil })
	expectCopiesIn(t, ctx, "rot-c1-multikueue")
	framework.Update(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Labels = map[string]string{"authentication.open-cluster-management.io/sync-to-clusterprofile": "true"}
	})
	expectCopiesIn(t, ctx, "rot-c1-multikueue", "rot-a", "rot-b")

	// Deleting the ManagedServiceAccount revokes them for good.
	NewWithT(t).Expect(c.Delete(ctx, msa)).To(Succeed())
	expectCopiesIn(t, ctx, "rot-c1-multikueue")
}

func TestUnbindingRevokesTheCopiesOfThatNamespace(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "unbind-set", []string{"unbind-c1"}, "unbind-keep", "unbind-drop")
	createMSA(ctx, t, "unbind-c1", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "unbind-c1-multikueue", "unbind-drop", "unbind-keep")

	started := time.Now()
	binding := &metav1.PartialObjectMetadata{}
	binding.SetGroupVersionKind(bindingGVK)
	binding.SetNamespace("unbind-drop")
	binding.SetName("unbind-set")
	NewWithT(t).Expect(env.Client.Delete(ctx, binding)).To(Succeed())
	expectCopiesIn(t, ctx, "unbind-c1-multikueue", "unbind-keep")
	t.Logf("unbinding revoked the copy in %s", time.Since(started).Round(time.Millisecond))
}

func TestNameCollisionsAreReportedAndNeverOverwritten(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	fleet(ctx, t, "coll-set", []string{"coll-a", "coll-a-b"}, "coll-ns")
	// A Secret that is not a synced copy already holds one name.
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "coll-ns", Name: "coll-a-other"},
		Data: map[string][]byte{"token": []byte("someone else's")}}
	NewWithT(t).Expect(c.Create(ctx, foreign)).To(Succeed())
	// Cluster coll-a + MSA b-c and cluster coll-a-b + MSA c both need coll-a-b-c.
	createMSA(ctx, t, "coll-a", "b-c", "token-of-a", expiry, true)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	expectCopiesIn(t, ctx, "coll-a-b-c", "coll-ns")
	createMSA(ctx, t, "coll-a-b", "c", "token-of-a-b", expiry, true)
	createMSA(ctx, t, "coll-a", "other", "token-other", expiry, true)

	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ManagedServiceAccount", "c", "SyncedSecretNameCollision")).To(ConsistOf(
			ContainSubstring(`the token of cluster "coll-a" and ManagedServiceAccount "b-c"`)))
		g.Expect(eventsAbout(g, ctx, "ManagedServiceAccount", "other", "SyncedSecretNameCollision")).To(ConsistOf(
			ContainSubstring("a Secret that is not a synced token")))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(string(syncedSecret(g, ctx, "coll-ns", "coll-a-b-c").Data["token"])).To(Equal("token-of-a"))
		g.Expect(string(syncedSecret(g, ctx, "coll-ns", "coll-a-other").Data["token"])).To(Equal("someone else's"))
		g.Expect(eventsAbout(g, ctx, "ManagedServiceAccount", "c", "SyncedSecretNameCollision")).To(HaveLen(1))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
}

func TestTurningTheGateOffWithCleanupRevokesEveryCopy(t *testing.T) {
	ctx := framework.ContextFor(t)
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "off-set", []string{"off-c1"}, "off-ns")
	createMSA(ctx, t, "off-c1", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "off-c1-multikueue", "off-ns")
	stop()

	// Gate off alone: revoking needs the right to list every Secret, which
	// only the cleanup option asks for, so the copies stay.
	stop = framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true}})
	NewWithT(t).Consistently(func(g Gomega) *corev1.Secret {
		return syncedSecret(g, ctx, "off-ns", "off-c1-multikueue")
	}, time.Second, 100*time.Millisecond).ShouldNot(BeNil())
	stop()

	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true}, CleanupDisabled: true})
	expectCopiesIn(t, ctx, "off-c1-multikueue")
}

// The syncer caches only the Secrets it needs: the agent's token Secrets
// and the synced copies, each selected by label; never every Secret of the hub.
func TestOnlyLabelledSecretsAreListedOrWatched(t *testing.T) {
	ctx := framework.ContextFor(t)
	secrets := framework.NewRequestCounter("secrets", "")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates, Counter: secrets})
	fleet(ctx, t, "cache-set", []string{"cache-c1"}, "cache-ns")
	createMSA(ctx, t, "cache-c1", "multikueue", "token-1", expiry, true)
	expectCopiesIn(t, ctx, "cache-c1-multikueue", "cache-ns")

	var listsAndWatches []string
	for _, r := range secrets.Requests() {
		if strings.HasPrefix(r, "GET ") && strings.Contains(r, "/secrets?") {
			listsAndWatches = append(listsAndWatches, r)
		}
	}
	g := NewWithT(t)
	g.Expect(listsAndWatches).NotTo(BeEmpty())
	for _, r := range listsAndWatches {
		g.Expect(r).To(Or(
			ContainSubstring("labelSelector=authentication.open-cluster-management.io%2Fis-managed-serviceaccount%3Dtrue"),
			ContainSubstring("labelSelector=authentication.open-cluster-management.io%2Fsynced-from"),
		), "an unselected list or watch of Secrets: %s", r)
	}
}
