package accessprovider_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestTheProxyEntryYieldsToClusterProxysOwnWriter: while cluster-proxy's
// manager runs its own ClusterProfile writer (its chart's
// featureGates.clusterProfileAccessProvider), the bundle's proxy source
// writes nothing, not even a rotated CA, and withdraws nothing: the entry
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
