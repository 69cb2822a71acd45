package accessprovider_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

func TestDirectEntryFollowsTheClientConfig(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.CreateNamespace(ctx, t, env.Client, "direct-ns")
	cluster := utiltesting.MakeManagedCluster("direct-c1").Obj()
	framework.CreateCluster(ctx, t, env.Client, cluster)
	createProfile(ctx, t, "direct-ns", "direct-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: directGate})

	// No client config: no entry.
	NewWithT(t).Consistently(func(g Gomega) int {
		return len(getProfile(g, ctx, "direct-ns", "direct-c1").Status.AccessProviders)
	}, time.Second, 100*time.Millisecond).Should(BeZero())

	setConfig := func(configs ...clusterv1.ClientConfig) {
		framework.UpdateCluster(ctx, t, env.Client, "direct-c1", func(mc *clusterv1.ManagedCluster) {
			mc.Spec.ManagedClusterClientConfigs = configs
		})
	}
	expectDirect := func(server, ca string) {
		t.Helper()
		NewWithT(t).Eventually(func(g Gomega) {
			entry, ok := entries(getProfile(g, ctx, "direct-ns", "direct-c1"))["open-cluster-management-direct"]
			g.Expect(ok).To(BeTrue())
			g.Expect(entry.Cluster.Server).To(Equal(server))
			g.Expect(string(entry.Cluster.CertificateAuthorityData)).To(Equal(ca))
			g.Expect(entry.Cluster.Extensions).To(HaveLen(1))
			g.Expect(string(entry.Cluster.Extensions[0].Extension.Raw)).To(MatchJSON(`{"clusterName":"direct-c1"}`))
		}, framework.Timeout, framework.Interval).Should(Succeed())
	}
	setConfig(clusterv1.ClientConfig{URL: "https://api.c1.example.com:6443", CABundle: utiltesting.FakeCA("CA-A")})
	expectDirect("https://api.c1.example.com:6443", utiltesting.FakeCAString("CA-A"))

	setConfig(clusterv1.ClientConfig{URL: "https://api2.c1.example.com:6443", CABundle: utiltesting.FakeCA("CA-B")},
		clusterv1.ClientConfig{URL: "https://ignored.example.com"})
	expectDirect("https://api2.c1.example.com:6443", utiltesting.FakeCAString("CA-B"))

	setConfig()
	expectEntries(t, ctx, "direct-ns", "direct-c1")
}
