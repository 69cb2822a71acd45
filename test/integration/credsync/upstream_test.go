package credsync_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestTheSyncerYieldsToManagedServiceAccountsOwnAndTakesOverInPlace: while
// managed-serviceaccount's manager, installed by a hub admin (its
// namespace, its ClusterManagementAddOn), runs its own syncer (its chart's
// featureGates.clusterProfileCredSyncer), the bundle's syncer creates and
// changes no copy; it marks that syncer's copy where this bundle's rules put
// one (so cp-creds uses it), and deletes it where they do not: revocation
// never yields. Turned off, the bundle's syncer takes the same copy over in
// place: same object, never deleted.
func TestTheSyncerYieldsToManagedServiceAccountsOwnAndTakesOverInPlace(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallUpstreamAddOn(ctx, t, c, "managed-serviceaccount")
	manager := framework.CreateUpstreamManager(ctx, t, c, coexistence.DefaultUpstreamNamespace, "managed-serviceaccount-addon-manager",
		"manager", "--feature-gates=EphemeralIdentity=false,ClusterProfileCredSyncer=true")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "up-set", []string{"up-c1"}, "up-kueue", "up-argocd")
	msa := createMSA(ctx, t, "up-c1", "multikueue", "token-1", expiry, true)
	scope(ctx, t, msa, "up-kueue")
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventsAbout(g, ctx, "Deployment", "managed-serviceaccount-addon-manager", "YieldingToUpstream")
	}, framework.Timeout, framework.Interval).Should(HaveLen(1))
	NewWithT(t).Consistently(func(g Gomega) []string {
		found, err := framework.SecretNamespaces(ctx, c, "up-c1-multikueue")
		g.Expect(err).NotTo(HaveOccurred())
		return found
	}, 2*time.Second, 100*time.Millisecond).Should(BeEmpty(), "the upstream syncer makes the copies")

	// managed-serviceaccount's syncer copies the token everywhere: vouched
	// for where the ManagedServiceAccount sends it, deleted elsewhere.
	copies := map[string]*corev1.Secret{}
	for _, ns := range []string{"up-kueue", "up-argocd"} {
		copies[ns] = createUpstreamCopy(ctx, t, ns, "up-c1", "multikueue", "token-1")
	}
	marks := map[string]string{
		cpcreds.AnnotationSourceCluster:               "up-c1",
		cpcreds.AnnotationSourceManagedServiceAccount: "multikueue",
		cpcreds.AnnotationTokenExpiration:             "2027-03-04T05:06:07Z",
		cpcreds.AnnotationPublishedServers:            "[]",
		cpcreds.AnnotationUpstreamCopy:                "true",
	}
	expectMarks(t, "up-kueue", "up-c1-multikueue", marks)
	expectCopiesWithin(t, ctx, "up-c1-multikueue", 10*time.Second, "up-kueue")

	// The ManagedServiceAccount's owner sends it elsewhere: the copy there
	// goes; the upstream syncer's next copy where it is sent is vouched for.
	scope(ctx, t, msa, "up-argocd")
	expectCopiesWithin(t, ctx, "up-c1-multikueue", 10*time.Second)
	createUpstreamCopy(ctx, t, "up-argocd", "up-c1", "multikueue", "token-1")
	expectMarks(t, "up-argocd", "up-c1-multikueue", marks)
	scope(ctx, t, msa, "up-kueue")
	expectCopiesWithin(t, ctx, "up-c1-multikueue", 10*time.Second)
	copies["up-kueue"] = createUpstreamCopy(ctx, t, "up-kueue", "up-c1", "multikueue", "token-1")
	expectMarks(t, "up-kueue", "up-c1-multikueue", marks)
	revoked, _, err := framework.MetricValue("clusterprofile_upstream_writes_revoked_total", map[string]string{"kind": "copy"})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(revoked).To(BeNumerically(">=", 3), "each revoked upstream copy is counted")

	// The upstream syncer is turned off: the copy is the bundle's, in place.
	framework.SetManagerArgs(ctx, t, c, manager, "manager", "--feature-gates=EphemeralIdentity=false,ClusterProfileCredSyncer=false")
	delete(marks, cpcreds.AnnotationUpstreamCopy)
	expectMarks(t, "up-kueue", "up-c1-multikueue", marks)
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventsAbout(g, ctx, "Deployment", "managed-serviceaccount-addon-manager", "TakingOverFromUpstream")
	}, framework.Timeout, framework.Interval).Should(HaveLen(1))
	taken := syncedSecret(NewWithT(t), ctx, "up-kueue", "up-c1-multikueue")
	NewWithT(t).Expect(taken.UID).To(Equal(copies["up-kueue"].UID), "taken over in place, never deleted")
	NewWithT(t).Expect(fieldManagers(taken)).NotTo(ContainElement(credsync.MarksFieldManager), "the marks are the syncer's own now")
	NewWithT(t).Expect(fieldManagers(taken)).To(ContainElement(credsync.FieldManager))
	// What the upstream syncer leaves in a namespace the MSA does not name
	// goes, now as before.
	createUpstreamCopy(ctx, t, "up-argocd", "up-c1", "multikueue", "token-1")
	expectCopiesWithin(t, ctx, "up-c1-multikueue", 10*time.Second, "up-kueue")
}

// createUpstreamCopy writes the copy managed-serviceaccount's own syncer
// makes of msa's token for cluster next to cluster's profile in namespace:
// its name and label, the token, an owner reference to the profile.
func createUpstreamCopy(ctx context.Context, t *testing.T, namespace, cluster, msa, token string) *corev1.Secret {
	t.Helper()
	profile := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Eventually(func() error {
		return env.Client.Get(ctx, keyOf(namespace, cluster), profile)
	}, framework.Timeout, framework.Interval).Should(Succeed())
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster + "-" + msa,
		Labels: map[string]string{cpcreds.LabelSyncedFrom: cluster + "-" + msa},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: cpv1alpha1.GroupVersion.String(), Kind: "ClusterProfile",
			Name: cluster, UID: profile.UID, Controller: ptr.To(true)}}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte(token), "ca.crt": []byte("CA of " + cluster)}}
	NewWithT(t).Expect(env.Client.Create(ctx, s)).To(Succeed())
	return s
}

// expectMarks waits until the Secret carries exactly these of the syncer's
// marks, its token and label untouched.
func expectMarks(t *testing.T, namespace, name string, want map[string]string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	NewWithT(t).Eventually(func(g Gomega) map[string]string {
		s := syncedSecret(g, ctx, namespace, name)
		g.Expect(s).NotTo(BeNil())
		g.Expect(string(s.Data["token"])).To(Equal("token-1"))
		got := map[string]string{}
		for _, key := range []string{cpcreds.AnnotationSourceCluster, cpcreds.AnnotationSourceManagedServiceAccount,
			cpcreds.AnnotationTokenExpiration, cpcreds.AnnotationPublishedServers, cpcreds.AnnotationUnscoped, cpcreds.AnnotationUpstreamCopy} {
			if v, ok := s.Annotations[key]; ok {
				got[key] = v
			}
		}
		return got
	}, framework.Timeout, framework.Interval).Should(Equal(want), "marks of %s/%s", namespace, name)
}

func fieldManagers(s *corev1.Secret) []string {
	var out []string
	for _, m := range s.ManagedFields {
		out = append(out, m.Manager)
	}
	return out
}
