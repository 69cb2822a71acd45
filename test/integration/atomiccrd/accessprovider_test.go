package atomiccrd_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

func TestAccessProvidersKeepOtherEntriesOnAtomicStatusLists(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	g := NewWithT(t)
	installProxy(ctx, t, "CA-1")
	framework.CreateNamespace(ctx, t, c, "atomic-ap-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("atomic-ap-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("atomic-ap-c1").ClusterSet("atomic-ap-set").
		Version("v1.31.0").Claim("region", "eu").Available(metav1.ConditionTrue).Obj())
	framework.UpdateCluster(ctx, t, c, "atomic-ap-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.atomic.example.com"}}
	})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("atomic-ap-ns", "atomic-ap-set").Bound(true).Obj())
	allGates := map[string]bool{"ClusterProfile": true, "ClusterProfileAccessProvider": true, "ClusterProfileDirectAccess": true}
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: allGates})

	key := types.NamespacedName{Namespace: "atomic-ap-ns", Name: "atomic-ap-c1"}
	profile := &cpv1alpha1.ClusterProfile{}
	names := func(g Gomega) []string {
		g.Expect(c.Get(ctx, key, profile)).To(Succeed())
		var out []string
		for _, ap := range profile.Status.AccessProviders {
			out = append(out, ap.Name)
		}
		return out
	}
	g.Eventually(names, framework.Timeout, framework.Interval).Should(ConsistOf("open-cluster-management", "open-cluster-management-direct"))

	// A third writer adds an entry, writing the whole list as old writers do.
	writeAsOldWriter(ctx, t, key, func(p *cpv1alpha1.ClusterProfile) {
		p.Status.AccessProviders = append(p.Status.AccessProviders,
			cpv1alpha1.AccessProvider{Name: "example-provider", Cluster: clientcmdv1.Cluster{Server: "https://example.invalid"}})
	})

	// Every writer writes again.
	rotateProxyCA(ctx, t, "CA-2")
	framework.UpdateCluster(ctx, t, c, "atomic-ap-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs[0].URL = "https://api2.atomic.example.com"
	})
	framework.UpdateClusterStatus(ctx, t, c, "atomic-ap-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "us"}}
	})
	g.Eventually(func(g Gomega) {
		g.Expect(names(g)).To(ConsistOf("open-cluster-management", "open-cluster-management-direct", "example-provider"))
		for _, ap := range profile.Status.AccessProviders {
			switch ap.Name {
			case "open-cluster-management":
				g.Expect(string(ap.Cluster.CertificateAuthorityData)).To(Equal("CA-2"))
			case "open-cluster-management-direct":
				g.Expect(ap.Cluster.Server).To(Equal("https://api2.atomic.example.com"))
			}
		}
		g.Expect(propertiesOf(profile)).To(Equal(map[string]string{"region": "us",
			"cluster.clusterset.k8s.io": "atomic-ap-c1", "clusterset.k8s.io": "atomic-ap-set"}))
		g.Expect(conditionStatuses(profile)).To(HaveKey("ClusterProxyAccess"))
		g.Expect(conditionStatuses(profile)).To(HaveKey("ControlPlaneHealthy"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Turning the proxy gate off withdraws its entry, and only it.
	stop()
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true, "ClusterProfileDirectAccess": true}})
	g.Eventually(names, framework.Timeout, framework.Interval).Should(ConsistOf("open-cluster-management-direct", "example-provider"))
	g.Consistently(func(g Gomega) map[string]metav1.ConditionStatus {
		g.Expect(c.Get(ctx, key, profile)).To(Succeed())
		return conditionStatuses(profile)
	}, time.Second, 100*time.Millisecond).ShouldNot(HaveKey("ClusterProxyAccess"))
}

const proxyNamespace = "open-cluster-management-addon"

func installProxy(ctx context.Context, t *testing.T, ca string) {
	t.Helper()
	c := env.Client
	framework.CreateNamespace(ctx, t, c, proxyNamespace)
	config := utiltesting.MakeProxyConfiguration(proxyNamespace)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy-user-serving-cert", Namespace: proxyNamespace},
		Data: map[string][]byte{"tls.crt": []byte(ca)}}
	for _, obj := range []client.Object{config, secret} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("installing cluster-proxy: %v", err)
		}
	}
}

func rotateProxyCA(ctx context.Context, t *testing.T, ca string) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy-user-serving-cert", Namespace: proxyNamespace}}
	framework.Update(ctx, t, env.Client, secret, func(s *corev1.Secret) { s.Data["tls.crt"] = []byte(ca) })
}
