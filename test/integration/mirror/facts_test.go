package mirror_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestChangedFactsWaitForTheWriteBudget: with a budget of one publication of
// facts an hour, the profile's creation spends none of it, the first change
// goes out once settled (two updates of the ManagedCluster, one write) and
// a significant one right after it on the budget's slack; then claims that change cost no write, significant or not, while a
// condition change goes out at once and takes them along. The mirror's own
// count of held reconciles says it saw each change, so no wait stands in
// for "nothing happened".
func TestChangedFactsWaitForTheWriteBudget(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	counter := framework.NewRequestCounter("clusterprofiles", "facts-")
	framework.StartManager(t, env, framework.ManagerOptions{Counter: counter,
		Facts: damping.Rule{MinInterval: time.Hour, SignificantFraction: 0.1, Refresh: 2 * time.Hour, Settle: damping.DefaultSettle}})
	framework.CreateNamespace(ctx, t, c, "facts-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("facts-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("facts-c1").ClusterSet("facts-set").
		Version("v1.31.0").Claim("nodes", "10").Claim("region", "eu").Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("facts-ns", "facts-set").Bound(true).Obj())
	expectProperty(t, "nodes", "10")
	expectWrites(t, counter, 2) // create, status
	// The first change comes in two updates, as the klusterlet carries a
	// report one claim at a time: it settles into one write.
	framework.UpdateClusterStatus(ctx, t, c, "facts-c1", func(mc *clusterv1.ManagedCluster) { setClaim(mc, "nodes", "20") })
	framework.UpdateClusterStatus(ctx, t, c, "facts-c1", func(mc *clusterv1.ManagedCluster) { setClaim(mc, "region", "us") })
	expectProperty(t, "region", "us")
	expectProperty(t, "nodes", "20")
	expectWrites(t, counter, 3)
	// A significant change right after it goes out on the slack.
	framework.UpdateClusterStatus(ctx, t, c, "facts-c1", func(mc *clusterv1.ManagedCluster) { setClaim(mc, "nodes", "30") })
	expectProperty(t, "nodes", "30")
	expectWrites(t, counter, 4)

	for _, change := range []struct{ nodes, kind string }{
		{nodes: "31", kind: "insignificant"},
		{nodes: "60", kind: "significant"},
	} {
		held := heldCount(t, change.kind)
		framework.UpdateClusterStatus(ctx, t, c, "facts-c1", func(mc *clusterv1.ManagedCluster) {
			setClaim(mc, "nodes", change.nodes)
		})
		NewWithT(t).Eventually(func() float64 { return heldCount(t, change.kind) },
			framework.Timeout, framework.Interval).Should(BeNumerically(">", held), "nodes %s held back", change.nodes)
		expectProperty(t, "nodes", "30")
		expectWrites(t, counter, 4)
	}

	framework.UpdateClusterStatus(ctx, t, c, "facts-c1", func(mc *clusterv1.ManagedCluster) {
		w := utiltesting.MakeManagedCluster("x")
		w.Status = mc.Status
		mc.Status = w.Available(metav1.ConditionFalse).Obj().Status
	})
	expectProperty(t, "nodes", "60")
	expectWrites(t, counter, 5)
}

func setClaim(mc *clusterv1.ManagedCluster, name, value string) {
	for i := range mc.Status.ClusterClaims {
		if mc.Status.ClusterClaims[i].Name == name {
			mc.Status.ClusterClaims[i].Value = value
		}
	}
}

func expectProperty(t *testing.T, name, value string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(utiltesting.ViewOf(getProfile(g, ctx, "facts-ns", "facts-c1")).Properties).To(HaveKeyWithValue(name, value))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func heldCount(t *testing.T, change string) float64 {
	t.Helper()
	value, _, err := framework.MetricValue(metrics.Name("facts_held_total"), map[string]string{"change": change})
	if err != nil {
		t.Fatal(err)
	}
	return value
}
