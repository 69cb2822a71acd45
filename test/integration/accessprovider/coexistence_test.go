package accessprovider_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
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
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	framework.CreateNamespace(ctx, t, c, "coexist-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("coexist-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("coexist-c1").ClusterSet("coexist-set").
		Version("v1.31.0").Claim("region", "eu").Available(metav1.ConditionTrue).Joined().Obj())
	framework.UpdateCluster(ctx, t, c, "coexist-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.coexist.example.com", CABundle: utiltesting.FakeCA("CA-D")}}
	})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("coexist-ns", "coexist-set").Bound(true).Obj())
	gates := map[string]bool{"ClusterProfile": true, "ClusterProfileAccessProvider": true, "ClusterProfileDirectAccess": true}
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})
	expectEntries(t, ctx, "coexist-ns", "coexist-c1", "open-cluster-management", "open-cluster-management-direct")

	applyStatusAs(t, "third-party", `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",
		"metadata":{"name":"coexist-c1","namespace":"coexist-ns"},"status":{
		"accessProviders":[{"name":"example-provider","cluster":{"server":"https://example.invalid"}}],
		"conditions":[{"type":"ThirdPartyReady","status":"True","reason":"Checked","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)

	// Every writer writes again: the mirror (a claim change), both providers
	// (a rotated user server CA, a new URL), and a restart.
	framework.UpdateClusterStatus(ctx, t, c, "coexist-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "us"}}
	})
	framework.UpdateCluster(ctx, t, c, "coexist-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs[0].URL = "https://api2.coexist.example.com"
	})
	framework.Update(ctx, t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: framework.ClusterProxyNamespace, Name: accessprovider.UserServerSecretName}},
		func(s *corev1.Secret) { s.Data["tls.crt"] = []byte("CA-2") })
	stop()
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})

	want := cpv1alpha1.ClusterProfileStatus{
		Version: cpv1alpha1.ClusterVersion{Kubernetes: "v1.31.0"},
		Properties: []cpv1alpha1.Property{{Name: "region", Value: "us"},
			{Name: "cluster.clusterset.k8s.io", Value: "coexist-c1"}, {Name: "clusterset.k8s.io", Value: "coexist-set"}},
		Conditions: []metav1.Condition{
			{Type: "ClusterProxyAccess", Status: metav1.ConditionTrue, Reason: "UserServerConfigured",
				Message: "Reachable through cluster-proxy's user server at https://cluster-proxy-addon-user.open-cluster-management-addon:9092/coexist-c1"},
			{Type: "ControlPlaneHealthy", Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
				Message: "Managed cluster is available"},
			{Type: "Joined", Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "Managed cluster joined"},
			{Type: "ThirdPartyReady", Status: metav1.ConditionTrue, Reason: "Checked"},
		},
		AccessProviders: []cpv1alpha1.AccessProvider{
			{Name: "example-provider", Cluster: clientcmdv1.Cluster{Server: "https://example.invalid"}},
			{Name: "open-cluster-management", Cluster: clientcmdv1.Cluster{
				Server:                   "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/coexist-c1",
				CertificateAuthorityData: []byte("CA-2"), Extensions: execExtension("coexist-c1")}},
			{Name: "open-cluster-management-direct", Cluster: clientcmdv1.Cluster{
				Server: "https://api2.coexist.example.com", CertificateAuthorityData: utiltesting.FakeCA("CA-D"), Extensions: execExtension("coexist-c1")}},
		},
	}
	// The writers' entries and conditions, whole; the order of a list-map's
	// items and the transition times are the API server's business.
	opts := cmp.Options{
		cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type }),
		cmpopts.SortSlices(func(a, b cpv1alpha1.AccessProvider) bool { return a.Name < b.Name }),
		cmpopts.SortSlices(func(a, b cpv1alpha1.Property) bool { return a.Name < b.Name }),
		cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
	}
	diff := func(g Gomega) string {
		return cmp.Diff(want, getProfile(g, ctx, "coexist-ns", "coexist-c1").Status, opts)
	}
	NewWithT(t).Eventually(diff, framework.Timeout, framework.Interval).Should(BeEmpty())
	NewWithT(t).Consistently(diff, 2*time.Second, 100*time.Millisecond).Should(BeEmpty())
}

// execExtension is the exec extension both entries carry for cp-creds.
func execExtension(cluster string) []clientcmdv1.NamedExtension {
	return []clientcmdv1.NamedExtension{{Name: cpcreds.ExecExtensionName,
		Extension: runtime.RawExtension{Raw: []byte(`{"clusterName":"` + cluster + `"}`)}}}
}

func TestTurningAGateOffWithdrawsOnlyThatEntry(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
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
