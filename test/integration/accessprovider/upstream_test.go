package accessprovider_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestTheProxyEntryYieldsToClusterProxysOwnWriter: while cluster-proxy's
// manager, installed by a hub admin (in the upstream namespace, with its
// ClusterManagementAddOn), runs its own ClusterProfile writer (its chart's
// featureGates.clusterProfileAccessProvider), the bundle's proxy source
// writes nothing on a published profile, not even a rotated CA: the entry
// is that writer's to keep. An Event on the Deployment says so. Turned off,
// the source takes the entry over in place and writes the CA it missed.
func TestTheProxyEntryYieldsToClusterProxysOwnWriter(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	secret := framework.InstallClusterProxy(ctx, t, c, []byte("CA-1"))
	framework.CreateNamespace(ctx, t, c, "yield-ns")
	createProfile(ctx, t, "yield-ns", "yield-c1")
	counter := framework.NewRequestCounter("clusterprofiles", "yield-")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate, Counter: counter})
	expectCA := func(ca string) {
		t.Helper()
		NewWithT(t).Eventually(func(g Gomega) string {
			return string(entries(getProfile(g, ctx, "yield-ns", "yield-c1"))[accessprovider.ProxyEntryName].Cluster.CertificateAuthorityData)
		}, framework.Timeout, framework.Interval).Should(Equal(ca))
	}
	expectCA("CA-1")

	framework.InstallUpstreamAddOn(ctx, t, c, "cluster-proxy")
	manager := framework.CreateUpstreamManager(ctx, t, c, framework.ClusterProxyNamespace, "cluster-proxy-addon-manager",
		"--leader-elect=true", "--feature-gates=ClusterProfileAccessProvider=true")
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, "Deployment", "cluster-proxy-addon-manager", "YieldingToUpstream")
	}, framework.Timeout, framework.Interval).Should(HaveLen(1))
	writes := counter.Writes()
	rotateCA(t, secret, "CA-2")
	NewWithT(t).Consistently(func(g Gomega) string {
		return string(entries(getProfile(g, ctx, "yield-ns", "yield-c1"))[accessprovider.ProxyEntryName].Cluster.CertificateAuthorityData)
	}, 2*time.Second, 100*time.Millisecond).Should(Equal("CA-1"), "cluster-proxy's own writer keeps the entry")
	NewWithT(t).Expect(counter.Writes()).To(Equal(writes), "no write while yielding")

	framework.SetManagerArgs(ctx, t, c, manager, "--leader-elect=true", "--feature-gates=ClusterProfileAccessProvider=false")
	expectCA("CA-2")
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, "Deployment", "cluster-proxy-addon-manager", "TakingOverFromUpstream")
	}, framework.Timeout, framework.Interval).Should(HaveLen(1))
	NewWithT(t).Expect(counter.Writes()).To(Equal(writes+1), "one write: the CA missed while yielding")
}

// TestRevocationNeverYields: while cluster-proxy's own writer, installed by
// a hub admin, writes the entry, a profile whose namespace stops serving its
// cluster (held by a tenant's finalizer, so it lingers) loses the entry
// within seconds, though cluster-proxy's field manager wrote it last; when
// that writer puts it back, the entry is revoked again after a pause, and
// counted.
func TestRevocationNeverYields(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallClusterProxy(ctx, t, c, []byte("CA-1"))
	framework.InstallUpstreamAddOn(ctx, t, c, "cluster-proxy")
	framework.CreateUpstreamManager(ctx, t, c, framework.ClusterProxyNamespace, "cluster-proxy-addon-manager",
		"--feature-gates=ClusterProfile=true")
	framework.CreateNamespace(ctx, t, c, "revoke-ns")
	createProfile(ctx, t, "revoke-ns", "revoke-c1")
	framework.Update(ctx, t, c, getProfile(NewWithT(t), ctx, "revoke-ns", "revoke-c1"), func(p *cpv1alpha1.ClusterProfile) {
		p.Finalizers = append(p.Finalizers, "tenant.example.com/hold")
	})
	t.Cleanup(func() { dropFinalizers(ctx, t, "revoke-ns", "revoke-c1") })
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate})
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, "Deployment", "cluster-proxy-addon-manager", "YieldingToUpstream")
	}, framework.Timeout, framework.Interval).ShouldNot(BeEmpty())
	putBack := func() {
		applyStatusAs(t, "cluster-proxy", `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",
			"metadata":{"name":"revoke-c1","namespace":"revoke-ns"},"status":{"accessProviders":[{"name":"open-cluster-management",
			"cluster":{"server":"https://cluster-proxy-addon-user.open-cluster-management-addon:9092/revoke-c1"}}]}}`)
	}
	putBack()
	NewWithT(t).Consistently(func(g Gomega) []string {
		return slices.Collect(maps.Keys(entries(getProfile(g, ctx, "revoke-ns", "revoke-c1"))))
	}, 2*time.Second, 100*time.Millisecond).Should(ConsistOf("open-cluster-management"), "served: the twin's to keep")

	unbind(ctx, t, "revoke-ns", "serve-revoke-c1")
	NewWithT(t).Expect(c.Delete(ctx, getProfile(NewWithT(t), ctx, "revoke-ns", "revoke-c1"))).To(Succeed())
	expectEntriesWithin(t, ctx, "revoke-ns", "revoke-c1", withdrawnWithin)
	before := revokedEntries(t)

	putBack()
	expectEntriesWithin(t, ctx, "revoke-ns", "revoke-c1", 3*revokeAgainAfter)
	NewWithT(t).Expect(revokedEntries(t)).To(BeNumerically(">", before), "an entry put back is counted")
}

// revokeAgainAfter is the pause before an entry put back is revoked again
// (accessprovider's first pause).
const revokeAgainAfter = 10 * time.Second

// TestADecoyTwinChangesNothing: a Deployment named like cluster-proxy's
// manager, its gate on, in a tenant's namespace, does not make the bundle
// yield, even with cluster-proxy's ClusterManagementAddOn installed: a
// rotated CA still reaches the profile. It is reported on the Deployment and
// counted.
func TestADecoyTwinChangesNothing(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	secret := framework.InstallClusterProxy(ctx, t, c, []byte("CA-1"))
	framework.InstallUpstreamAddOn(ctx, t, c, "cluster-proxy")
	framework.CreateNamespace(ctx, t, c, "decoy-ns")
	createProfile(ctx, t, "decoy-ns", "decoy-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate})
	framework.CreateUpstreamManager(ctx, t, c, "decoy-ns", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true")
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, "Deployment", "cluster-proxy-addon-manager", "TwinDecoyIgnored")
	}, framework.Timeout, framework.Interval).Should(ConsistOf(ContainSubstring(
		"but namespace decoy-ns is not one that hub admins install upstream components into")))
	decoys, _, err := framework.MetricValue("clusterprofile_twin_decoys_ignored", map[string]string{"capability": "access-proxy", "reason": "namespace"})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(decoys).To(Equal(1.0))
	rotateCA(t, secret, "CA-2")
	NewWithT(t).Eventually(func(g Gomega) string {
		return string(entries(getProfile(g, ctx, "decoy-ns", "decoy-c1"))[accessprovider.ProxyEntryName].Cluster.CertificateAuthorityData)
	}, framework.Timeout, framework.Interval).Should(Equal("CA-2"), "the decoy did not make the access provider yield")
}

// revokedEntries reads clusterprofile_upstream_writes_revoked_total{kind="entry"}.
func revokedEntries(t *testing.T) float64 {
	t.Helper()
	v, _, err := framework.MetricValue("clusterprofile_upstream_writes_revoked_total", map[string]string{"kind": "entry"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// expectEntriesWithin waits at most within until the profile carries no entry.
func expectEntriesWithin(t *testing.T, ctx context.Context, namespace, name string, within time.Duration) {
	t.Helper()
	start := time.Now()
	NewWithT(t).Eventually(func(g Gomega) []cpv1alpha1.AccessProvider {
		return getProfile(g, ctx, namespace, name).Status.AccessProviders
	}, within, 50*time.Millisecond).Should(BeEmpty(), "entries of %s/%s", namespace, name)
	t.Logf("%s/%s has no entry after %s", namespace, name, time.Since(start).Round(time.Millisecond))
}

func dropFinalizers(ctx context.Context, t *testing.T, namespace, name string) {
	p := &cpv1alpha1.ClusterProfile{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, p); err != nil {
		return
	}
	p.Finalizers = nil
	_ = env.Client.Update(context.Background(), p)
}

func rotateCA(t *testing.T, secret *corev1.Secret, ca string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	current := &corev1.Secret{}
	NewWithT(t).Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: secret.Namespace, Name: secret.Name}, current)).To(Succeed())
	current.Data[accessprovider.UserServerCAKey] = []byte(ca)
	NewWithT(t).Expect(env.Client.Update(ctx, current)).To(Succeed())
}

func eventNotes(g Gomega, kind, name, reason string) []string {
	events, err := framework.EventsAbout(context.Background(), env.Client, kind, name, reason)
	g.Expect(err).NotTo(HaveOccurred())
	notes := make([]string, 0, len(events))
	for _, e := range events {
		notes = append(notes, e.Note)
	}
	return notes
}

// TestRemovingAnEntryFromAStaleReadIsAConflict: Writer.RemoveEntry removes
// exactly what was read; from a profile that changed since, the API server
// refuses the patch (its resourceVersion test fails), which the writer
// reports as a Conflict, as any stale write, and nothing is removed.
func TestRemovingAnEntryFromAStaleReadIsAConflict(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.CreateNamespace(ctx, t, c, "stale-ns")
	createUnservedProfile(ctx, t, "stale-ns", "stale-c1")
	applyStatusAs(t, "cluster-proxy", `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",
		"metadata":{"name":"stale-c1","namespace":"stale-ns"},"status":{"accessProviders":[{"name":"open-cluster-management",
		"cluster":{"server":"https://cluster-proxy-addon-user.open-cluster-management-addon:9092/stale-c1"}}]}}`)
	stale := getProfile(NewWithT(t), ctx, "stale-ns", "stale-c1")
	framework.Update(ctx, t, c, getProfile(NewWithT(t), ctx, "stale-ns", "stale-c1"), func(p *cpv1alpha1.ClusterProfile) {
		p.Labels["team"] = "a"
	})
	writer := clusterprofile.NewWriter(profilewrite.Identity{FieldManager: "clusterprofile-access-proxy"}, c)

	_, err := writer.RemoveEntry(ctx, stale, "open-cluster-management")
	NewWithT(t).Expect(apierrors.IsConflict(err)).To(BeTrue(), "a stale read: %v", err)
	NewWithT(t).Expect(entries(getProfile(NewWithT(t), ctx, "stale-ns", "stale-c1"))).To(HaveKey("open-cluster-management"))

	_, err = writer.RemoveEntry(ctx, getProfile(NewWithT(t), ctx, "stale-ns", "stale-c1"), "open-cluster-management")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(entries(getProfile(NewWithT(t), ctx, "stale-ns", "stale-c1"))).To(BeEmpty())
}
