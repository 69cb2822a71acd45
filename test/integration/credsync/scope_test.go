package credsync_test

import (
	"context"
	"sort"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// movedWithin is how soon a copy follows a change of its ManagedServiceAccount's
// consumer namespaces: "within seconds".
const movedWithin = 5 * time.Second

// TestEachConsumerHoldsOnlyItsOwnToken: two consumers of one cluster, MultiKueue
// in its namespace and Argo CD in its own, each with a ManagedServiceAccount
// naming only its namespace. Each namespace holds exactly its own copy, and
// keeps holding only that; naming a namespace brings the copy there within
// seconds, dropping it takes the copy away as fast.
func TestEachConsumerHoldsOnlyItsOwnToken(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "iso-set", []string{"iso-c1"}, "iso-kueue", "iso-argocd")
	multikueue := createMSA(ctx, t, "iso-c1", "multikueue", "token-mk", expiry, true)
	argocd := createMSA(ctx, t, "iso-c1", "argocd", "token-argo", expiry, true)
	scope(ctx, t, multikueue, "iso-kueue")
	scope(ctx, t, argocd, "iso-argocd")

	expectCopiesIn(t, ctx, "iso-c1-multikueue", "iso-kueue")
	expectCopiesIn(t, ctx, "iso-c1-argocd", "iso-argocd")
	NewWithT(t).Consistently(func(g Gomega) map[string][]string {
		return copiesByNamespace(g, ctx, "iso-kueue", "iso-argocd")
	}, 3*time.Second, 100*time.Millisecond).Should(Equal(map[string][]string{
		"iso-kueue": {"iso-c1-multikueue"}, "iso-argocd": {"iso-c1-argocd"},
	}))

	scope(ctx, t, argocd, "iso-argocd, iso-kueue")
	expectCopiesWithin(t, ctx, "iso-c1-argocd", movedWithin, "iso-argocd", "iso-kueue")
	scope(ctx, t, argocd, "iso-kueue")
	expectCopiesWithin(t, ctx, "iso-c1-argocd", movedWithin, "iso-kueue")
	scope(ctx, t, argocd, "")
	expectCopiesWithin(t, ctx, "iso-c1-argocd", movedWithin)
	expectCopiesIn(t, ctx, "iso-c1-multikueue", "iso-kueue")
}

// TestUnscopedTokensGoNowhereWhenAsked: with unscopedTokens nowhere, a
// ManagedServiceAccount that names no consumer namespace has its token
// copied nowhere, and one naming a namespace still reaches it.
func TestUnscopedTokensGoNowhereWhenAsked(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates, UnscopedTokens: credsync.UnscopedNowhere})
	fleet(ctx, t, "nowhere-set", []string{"nowhere-c1"}, "nowhere-kueue", "nowhere-argocd")
	unscoped := createMSA(ctx, t, "nowhere-c1", "unscoped", "token-u", expiry, true)
	scoped := createMSA(ctx, t, "nowhere-c1", "scoped", "token-s", expiry, true)
	scope(ctx, t, scoped, "nowhere-kueue")

	expectCopiesIn(t, ctx, "nowhere-c1-scoped", "nowhere-kueue")
	NewWithT(t).Consistently(func(g Gomega) []string {
		found, err := framework.SecretNamespaces(ctx, env.Client, "nowhere-c1-unscoped")
		g.Expect(err).NotTo(HaveOccurred())
		return found
	}, 3*time.Second, 100*time.Millisecond).Should(BeEmpty())
	NewWithT(t).Consistently(func(g Gomega) []string {
		return eventsAbout(g, ctx, "ManagedServiceAccount", unscoped.Name, credsync.ReasonUnscopedToken)
	}, time.Second, 100*time.Millisecond).Should(BeEmpty())

	scope(ctx, t, unscoped, "nowhere-argocd")
	expectCopiesWithin(t, ctx, "nowhere-c1-unscoped", movedWithin, "nowhere-argocd")
}

// TestUnscopedTokensEverywhereAreReported: by default an unscoped token goes
// into every namespace that serves its cluster, as upstream's syncer does;
// each copy says so, the ManagedServiceAccount gets a warning Event naming
// where its token went, and the metric counts the copies.
func TestUnscopedTokensEverywhereAreReported(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	fleet(ctx, t, "everywhere-set", []string{"everywhere-c1"}, "everywhere-kueue", "everywhere-argocd")
	createMSA(ctx, t, "everywhere-c1", "unscoped", "token-u", expiry, true)

	expectCopiesIn(t, ctx, "everywhere-c1-unscoped", "everywhere-argocd", "everywhere-kueue")
	for _, ns := range []string{"everywhere-kueue", "everywhere-argocd"} {
		NewWithT(t).Eventually(func(g Gomega) map[string]string {
			return syncedSecret(g, ctx, ns, "everywhere-c1-unscoped").Annotations
		}, framework.Timeout, framework.Interval).Should(HaveKeyWithValue(cpcreds.AnnotationUnscoped, "true"))
	}
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventsAbout(g, ctx, "ManagedServiceAccount", "unscoped", credsync.ReasonUnscopedToken)
	}, framework.Timeout, framework.Interval).Should(ContainElement(
		"This ManagedServiceAccount names no consumer namespaces, so its token is copied into every namespace that serves cluster " +
			"everywhere-c1 (now: everywhere-argocd, everywhere-kueue) and any consumer there can use it. " +
			"Set the annotation clusterprofile.open-cluster-management.io/consumer-namespaces to the namespaces that need it."))
	// The metric counts every unscoped copy the syncer's cache holds, this
	// test's and those earlier tests in the suite left.
	NewWithT(t).Eventually(func(g Gomega) float64 {
		want := float64(unscopedCopies(g, ctx))
		return gauge(g, "clusterprofile_synced_tokens_unscoped") - want
	}, framework.Timeout, framework.Interval).Should(BeZero())
}

// scope sets msa's consumer namespaces ("" names none, which is a scope too).
func scope(ctx context.Context, t *testing.T, msa *authv1beta1.ManagedServiceAccount, namespaces string) {
	t.Helper()
	framework.Update(ctx, t, env.Client, msa, func(m *authv1beta1.ManagedServiceAccount) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[cpcreds.AnnotationConsumerNamespaces] = namespaces
	})
}

// expectCopiesWithin waits at most within until exactly these namespaces
// hold the named copy.
func expectCopiesWithin(t *testing.T, ctx context.Context, name string, within time.Duration, namespaces ...string) {
	t.Helper()
	if namespaces == nil {
		namespaces = []string{}
	}
	sort.Strings(namespaces)
	start := time.Now()
	NewWithT(t).Eventually(func(g Gomega) []string {
		found, err := framework.SecretNamespaces(ctx, env.Client, name)
		g.Expect(err).NotTo(HaveOccurred())
		return found
	}, within, 50*time.Millisecond).Should(Equal(namespaces), "namespaces holding Secret %s", name)
	t.Logf("%s is in %v after %s", name, namespaces, time.Since(start).Round(time.Millisecond))
}

// copiesByNamespace lists the synced copies of each namespace by name.
func copiesByNamespace(g Gomega, ctx context.Context, namespaces ...string) map[string][]string {
	out := map[string][]string{}
	for _, ns := range namespaces {
		list := &corev1.SecretList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{cpcreds.LabelSyncedFrom})).To(Succeed())
		for _, s := range list.Items {
			out[ns] = append(out[ns], s.Name)
		}
		sort.Strings(out[ns])
	}
	return out
}

func unscopedCopies(g Gomega, ctx context.Context) int {
	list := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, list, client.HasLabels{cpcreds.LabelSyncedFrom})).To(Succeed())
	n := 0
	for _, s := range list.Items {
		if s.Annotations[cpcreds.AnnotationUnscoped] == "true" {
			n++
		}
	}
	return n
}

// gauge reads a gauge without labels from the manager's metrics registry.
func gauge(g Gomega, name string) float64 {
	value, found, err := framework.MetricValue(name, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue(), "no gauge %s", name)
	return value
}
