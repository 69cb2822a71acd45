package accessprovider_test

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// applyStatusAs applies a status as another field manager.
func applyStatusAs(t *testing.T, manager, body string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(body), &u.Object); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Status().Apply(framework.ContextFor(t), client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(manager), client.ForceOwnership); err != nil {
		t.Fatalf("applying as %s: %v", manager, err)
	}
}

func TestBothProvidersTheMirrorAndAThirdWriterCoexist(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	installClusterProxy(ctx, t, "CA-1")
	framework.CreateNamespace(ctx, t, c, "coexist-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("coexist-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("coexist-c1").ClusterSet("coexist-set").
		Version("v1.31.0").Claim("region", "eu").Available(metav1.ConditionTrue).Joined().Obj())
	framework.UpdateCluster(ctx, t, c, "coexist-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.coexist.example.com", CABundle: []byte("CA-D")}}
	})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("coexist-ns", "coexist-set").Bound(true).Obj())
	gates := map[string]bool{"ClusterProfile": true, "ClusterProfileAccessProvider": true, "ClusterProfileDirectAccess": true}
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})
	expectEntries(t, ctx, "coexist-ns", "coexist-c1", "open-cluster-management", "open-cluster-management-direct")

	applyStatusAs(t, "third-party", `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",
		"metadata":{"name":"coexist-c1","namespace":"coexist-ns"},"status":{
		"accessProviders":[{"name":"example-provider","cluster":{"server":"https://example.invalid"}}],
		"conditions":[{"type":"ThirdPartyReady","status":"True","reason":"Checked","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)

	// Every writer writes again: the mirror (a condition and a claim
	// change), both providers (a new CA, a new URL), and a restart.
	framework.UpdateClusterStatus(ctx, t, c, "coexist-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "us"}}
	})
	framework.UpdateCluster(ctx, t, c, "coexist-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs[0].URL = "https://api2.coexist.example.com"
	})
	stop()
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})

	NewWithT(t).Eventually(func(g Gomega) {
		p := getProfile(g, ctx, "coexist-ns", "coexist-c1")
		e := entries(p)
		g.Expect(e).To(HaveKey("open-cluster-management"))
		g.Expect(e).To(HaveKey("example-provider"))
		g.Expect(e["open-cluster-management-direct"].Cluster.Server).To(Equal("https://api2.coexist.example.com"))
		g.Expect(p.Status.Properties).To(ConsistOf(HaveField("Value", "us")))
		for _, t := range []string{"ControlPlaneHealthy", "Joined", "ClusterProxyAccess", "ThirdPartyReady"} {
			g.Expect(condition(p, t)).NotTo(BeNil(), t)
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
	NewWithT(t).Consistently(func(g Gomega) []string {
		var names []string
		for _, ap := range getProfile(g, ctx, "coexist-ns", "coexist-c1").Status.AccessProviders {
			names = append(names, ap.Name)
		}
		return names
	}, 2*time.Second, 100*time.Millisecond).Should(ConsistOf("open-cluster-management", "open-cluster-management-direct", "example-provider"))
}

func TestTurningAGateOffWithdrawsOnlyThatEntry(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	installClusterProxy(ctx, t, "CA-1")
	framework.CreateNamespace(ctx, t, c, "gateoff-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("gateoff-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("gateoff-c1").ClusterSet("gateoff-set").
		Version("v1.31.0").Available(metav1.ConditionTrue).Obj())
	framework.UpdateCluster(ctx, t, c, "gateoff-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.gateoff.example.com"}}
	})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("gateoff-ns", "gateoff-set").Bound(true).Obj())
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{
		"ClusterProfile": true, "ClusterProfileAccessProvider": true, "ClusterProfileDirectAccess": true}})
	expectEntries(t, ctx, "gateoff-ns", "gateoff-c1", "open-cluster-management", "open-cluster-management-direct")
	applyStatusAs(t, "third-party", `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",
		"metadata":{"name":"gateoff-c1","namespace":"gateoff-ns"},"status":{
		"accessProviders":[{"name":"example-provider","cluster":{"server":"https://example.invalid"}}]}}`)
	stop()

	// The proxy gate goes off: its entry and condition go, nothing else.
	stop = framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{
		"ClusterProfile": true, "ClusterProfileDirectAccess": true}})
	expectEntries(t, ctx, "gateoff-ns", "gateoff-c1", "open-cluster-management-direct", "example-provider")
	NewWithT(t).Eventually(func(g Gomega) {
		p := getProfile(g, ctx, "gateoff-ns", "gateoff-c1")
		g.Expect(condition(p, "ClusterProxyAccess")).To(BeNil())
		g.Expect(condition(p, "ControlPlaneHealthy")).NotTo(BeNil())
		g.Expect(p.Status.Version.Kubernetes).To(Equal("v1.31.0"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	stop()

	// The direct gate goes off too.
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true}})
	expectEntries(t, ctx, "gateoff-ns", "gateoff-c1", "example-provider")
}
