package reliability_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// The ClusterProfile CRD is upgraded from atomic status lists to list-maps
// while the manager runs (as when OCM's copy is replaced by
// cluster-inventory-api's): entries the mirror and the direct entry wrote
// before the switch and no longer want are removed; another writer's stay.
//
// The order that lost entries (two runs in three, before the fix): the
// other writer's merge patch takes every atomic list from the direct
// writer's Update entry, which the API server then drops, so nothing showed
// that its entry was written before the switch; and the mirror's first apply
// reached the API server before it had loaded the new CRD, which merged the
// lists atomically and dropped the other writer's property and condition.
// profilewrite's TestPlanAfterTheSwitchToListMaps plans that order.
func TestTheCRDSwitchesFromAtomicListsToListMaps(t *testing.T) {
	old, err := framework.Start(framework.Options{AtomicClusterProfileCRD: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Stop() })
	ctx := framework.ContextFor(t)
	c := old.Client
	framework.StartManager(t, old, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfileDirectAccess": true}})
	framework.CreateNamespace(ctx, t, c, "switch-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("switch-set").Obj())
	cluster := utiltesting.MakeManagedCluster("switch-c1").ClusterSet("switch-set").Claim("region", "eu").Claim("zone", "a").
		Available(metav1.ConditionTrue).Joined().Obj()
	cluster.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.switch.example.com"}}
	framework.CreateCluster(ctx, t, c, cluster)
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("switch-ns", "switch-set").Bound(true).Obj())
	key := types.NamespacedName{Namespace: "switch-ns", Name: "switch-c1"}
	expectStatus(t, ctx, c, key, statusView{Properties: append(standardProperties("switch-c1", "switch-set"), "region=eu", "zone=a"),
		Conditions: []string{"ControlPlaneHealthy", "Joined"}, Entries: []string{"open-cluster-management-direct"}})
	retryStatus(ctx, t, c, key, func(p *cpv1alpha1.ClusterProfile) {
		p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: "cost-center", Value: "42"})
		p.Status.Conditions = append(p.Status.Conditions, metav1.Condition{Type: "ThirdPartyReady", Status: metav1.ConditionTrue,
			Reason: "Checked", LastTransitionTime: utiltesting.ConditionTime})
		p.Status.AccessProviders = append(p.Status.AccessProviders, cpv1alpha1.AccessProvider{Name: "example",
			Cluster: clientcmdv1.Cluster{Server: "https://example.invalid"}})
	})

	switchToListMaps(ctx, t, c)
	// The zone claim, the Joined condition and the client config go.
	framework.UpdateClusterStatus(ctx, t, c, "switch-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "eu"}}
		mc.Status.Conditions = mc.Status.Conditions[:1]
	})
	framework.UpdateCluster(ctx, t, c, "switch-c1", func(mc *clusterv1.ManagedCluster) { mc.Spec.ManagedClusterClientConfigs = nil })
	expectStatus(t, ctx, c, key, statusView{Properties: append(standardProperties("switch-c1", "switch-set"), "cost-center=42", "region=eu"),
		Conditions: []string{"ControlPlaneHealthy", "ThirdPartyReady"}, Entries: []string{"example"}})
}

// switchToListMaps replaces the ClusterProfile CRD's schema with the pinned
// release's, whose status lists are list-maps, and waits until it is served.
func switchToListMaps(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	crds, err := framework.CRDs(framework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range crds {
		if want.Name != clusterprofile.CRDName {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			if err := c.Get(ctx, types.NamespacedName{Name: want.Name}, crd); err != nil {
				return err
			}
			crd.Spec.Versions = want.Spec.Versions
			return c.Update(ctx, crd)
		})
		if err != nil {
			t.Fatalf("switching the ClusterProfile CRD to list-maps: %v", err)
		}
	}
	NewWithT(t).Eventually(func(g Gomega) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(c.Get(ctx, types.NamespacedName{Name: clusterprofile.CRDName}, crd)).To(Succeed())
		g.Expect(profilewrite.StatusListsAreMaps(crd)).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
