package accessprovider_test

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

func TestProxyEntryIsWrittenAsTheGuideShowsIt(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	framework.CreateNamespace(ctx, t, env.Client, "entry-ns")
	createProfile(ctx, t, "entry-ns", "entry-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate})

	NewWithT(t).Eventually(func(g Gomega) {
		p := getProfile(g, ctx, "entry-ns", "entry-c1")
		entry, ok := entries(p)["open-cluster-management"]
		g.Expect(ok).To(BeTrue(), "no open-cluster-management entry")
		g.Expect(entry.Cluster.Server).To(Equal("https://cluster-proxy-addon-user.open-cluster-management-addon:9092/entry-c1"))
		g.Expect(string(entry.Cluster.CertificateAuthorityData)).To(Equal("CA-1"))
		g.Expect(entry.Cluster.Extensions).To(HaveLen(1))
		g.Expect(entry.Cluster.Extensions[0].Name).To(Equal("client.authentication.k8s.io/exec"))
		g.Expect(json.RawMessage(entry.Cluster.Extensions[0].Extension.Raw)).To(MatchJSON(`{"clusterName":"entry-c1"}`))
		c := condition(p, "ClusterProxyAccess")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("UserServerConfigured"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestCertificateRotationReachesEveryProfileAndNothingElse(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	namespaces := []string{"rotate-a", "rotate-b", "rotate-c"}
	for _, ns := range namespaces {
		framework.CreateNamespace(ctx, t, env.Client, ns)
		createProfile(ctx, t, ns, "rotate-c1")
	}
	counter := framework.NewRequestCounter("clusterprofiles", "rotate-")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate, Counter: counter})
	for _, ns := range namespaces {
		expectEntries(t, ctx, ns, "rotate-c1", "open-cluster-management")
	}
	before := map[string]*cpv1alpha1.ClusterProfile{}
	NewWithT(t).Eventually(counter.Writes, framework.Timeout).Should(Equal(3))
	for _, ns := range namespaces {
		before[ns] = getProfile(NewWithT(t), ctx, ns, "rotate-c1")
	}

	secret := &corev1.Secret{}
	NewWithT(t).Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: framework.ClusterProxyNamespace, Name: accessprovider.UserServerSecretName}, secret)).To(Succeed())
	secret.Data["tls.crt"] = []byte("CA-2")
	NewWithT(t).Expect(env.Client.Update(ctx, secret)).To(Succeed())
	rotated := time.Now()

	NewWithT(t).Eventually(func(g Gomega) {
		for _, ns := range namespaces {
			g.Expect(string(entries(getProfile(g, ctx, ns, "rotate-c1"))["open-cluster-management"].Cluster.CertificateAuthorityData)).To(Equal("CA-2"))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
	t.Logf("CA rotation reached every profile in %s", time.Since(rotated).Round(time.Millisecond))
	NewWithT(t).Consistently(counter.Writes, 2*time.Second, 100*time.Millisecond).Should(Equal(6), "one write per profile")
	for _, ns := range namespaces {
		after := getProfile(NewWithT(t), ctx, ns, "rotate-c1")
		// Only the CA changed: same condition (and transition time), labels, spec.
		NewWithT(t).Expect(after.Status.Conditions).To(Equal(before[ns].Status.Conditions))
		NewWithT(t).Expect(after.Labels).To(Equal(before[ns].Labels))
		NewWithT(t).Expect(after.Spec).To(Equal(before[ns].Spec))
		NewWithT(t).Expect(entries(after)["open-cluster-management"].Cluster.Server).
			To(Equal(entries(before[ns])["open-cluster-management"].Cluster.Server))
	}
}

func TestMissingConfigurationAndSecretAreReportedThenRepaired(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.CreateNamespace(ctx, t, env.Client, "missing-ns")
	createProfile(ctx, t, "missing-ns", "missing-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate})

	expectCondition := func(status metav1.ConditionStatus, reason string) {
		t.Helper()
		NewWithT(t).Eventually(func(g Gomega) {
			c := condition(getProfile(g, ctx, "missing-ns", "missing-c1"), "ClusterProxyAccess")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(status))
			g.Expect(c.Reason).To(Equal(reason))
		}, framework.Timeout, framework.Interval).Should(Succeed())
	}
	expectCondition(metav1.ConditionFalse, "ProxyConfigurationMissing")
	expectEntries(t, ctx, "missing-ns", "missing-c1")

	// The configuration appears, without its certificate yet.
	framework.CreateClusterProxyConfiguration(ctx, t, env.Client)
	expectCondition(metav1.ConditionFalse, "UserServerCertificateMissing")

	secret := framework.CreateUserServerSecret(ctx, t, env.Client, []byte("CA-1"))
	expectCondition(metav1.ConditionTrue, "UserServerConfigured")
	expectEntries(t, ctx, "missing-ns", "missing-c1", "open-cluster-management")

	// The certificate goes away again: the entry goes with it.
	NewWithT(t).Expect(env.Client.Delete(ctx, secret)).To(Succeed())
	expectCondition(metav1.ConditionFalse, "UserServerCertificateMissing")
	expectEntries(t, ctx, "missing-ns", "missing-c1")
}

func TestConfiguredUserServerEndpoint(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	framework.CreateNamespace(ctx, t, env.Client, "endpoint-ns")
	createProfile(ctx, t, "endpoint-ns", "endpoint-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate,
		ProxyEndpoint: accessprovider.Endpoint{Host: "proxy.hub.example.com", Port: 443}})
	NewWithT(t).Eventually(func(g Gomega) string {
		return entries(getProfile(g, ctx, "endpoint-ns", "endpoint-c1"))["open-cluster-management"].Cluster.Server
	}, framework.Timeout, framework.Interval).Should(Equal("https://proxy.hub.example.com:443/endpoint-c1"))
}
