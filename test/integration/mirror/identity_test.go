package mirror_test

import (
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// identityView is a profile of the identity test as it must read, with the
// standard id properties (and the claim, when it is the cluster's alone).
func identityView(cluster string, properties map[string]string) utiltesting.ProfileView {
	properties["clusterset.k8s.io"] = "ident-set"
	return utiltesting.ProfileView{
		Labels: map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
			"open-cluster-management.io/cluster-name": cluster, "multicluster.x-k8s.io/clusterset": "ident-set"},
		DisplayName: cluster, Manager: "open-cluster-management",
		Properties: properties, Conditions: map[string]utiltesting.ConditionView{},
	}
}

// conflictNote is the ClusterIDConflict Event's note.
func conflictNote(id, others, cluster string) string {
	return `The id.k8s.io claim "` + id + `" is also ` + others + `: its ClusterProfiles carry cluster.clusterset.k8s.io="` + cluster +
		`" (this ManagedCluster's name) and no id.k8s.io property until the id is its alone`
}

// expectConflictNotes waits until the cluster's ClusterIDConflict Events
// carry exactly these notes.
func expectConflictNotes(t *testing.T, cluster string, want ...string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	NewWithT(t).Eventually(func(g Gomega) []string {
		var notes []string
		for _, e := range eventsAbout(g, ctx, "ManagedCluster", cluster, "ClusterIDConflict") {
			notes = append(notes, e.Note)
		}
		slices.Sort(notes)
		return notes
	}, framework.Timeout, framework.Interval).Should(Equal(want), "ClusterIDConflict Events of %s", cluster)
}

func dropClaims(mc *clusterv1.ManagedCluster) { mc.Status.ClusterClaims = nil }

// TestClusterIDIsUniqueAmongClusters plays a klusterlet that claims another
// cluster's id, or another cluster's name: neither is published for it.
func TestClusterIDIsUniqueAmongClusters(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "ident-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("ident-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("ident-ns", "ident-set").Bound(true).Obj())
	claiming := func(name, id string) *clusterv1.ManagedCluster {
		return utiltesting.MakeManagedCluster(name).ClusterSet("ident-set").Claim("id.k8s.io", id).Obj()
	}

	// Two clusters claim one id: each is published under its own name.
	framework.CreateCluster(ctx, t, c, claiming("ident-a", "ident-shared"))
	framework.CreateCluster(ctx, t, c, claiming("ident-b", "ident-shared"))
	expectProfile(t, ctx, "ident-ns", "ident-a", identityView("ident-a", map[string]string{"cluster.clusterset.k8s.io": "ident-a"}))
	expectProfile(t, ctx, "ident-ns", "ident-b", identityView("ident-b", map[string]string{"cluster.clusterset.k8s.io": "ident-b"}))
	expectConflictNotes(t, "ident-a", conflictNote("ident-shared", "claimed by ManagedCluster(s) ident-b", "ident-a"))
	expectConflictNotes(t, "ident-b", conflictNote("ident-shared", "claimed by ManagedCluster(s) ident-a", "ident-b"))

	// Reconciles of an unchanged conflict report nothing more.
	framework.UpdateCluster(ctx, t, c, "ident-a", func(mc *clusterv1.ManagedCluster) {
		mc.Annotations = map[string]string{"touched": "yes"}
	})
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ManagedCluster", "ident-a", "ClusterIDConflict")).To(HaveLen(1))
	}, "2s", "200ms").Should(Succeed())

	// One drops its claim: the other gets its id back.
	framework.UpdateClusterStatus(ctx, t, c, "ident-b", dropClaims)
	expectProfile(t, ctx, "ident-ns", "ident-a", identityView("ident-a",
		map[string]string{"id.k8s.io": "ident-shared", "cluster.clusterset.k8s.io": "ident-shared"}))
	expectProfile(t, ctx, "ident-ns", "ident-b", identityView("ident-b", map[string]string{"cluster.clusterset.k8s.io": "ident-b"}))

	// A cluster claiming another cluster's name would collide with that
	// cluster's name fallback: refused.
	framework.CreateCluster(ctx, t, c, claiming("ident-c", "ident-b"))
	expectProfile(t, ctx, "ident-ns", "ident-c", identityView("ident-c", map[string]string{"cluster.clusterset.k8s.io": "ident-c"}))
	expectConflictNotes(t, "ident-c", conflictNote("ident-b", "the name of ManagedCluster ident-b", "ident-c"))

	// A claim of a name no cluster has yet holds until that cluster appears.
	framework.CreateCluster(ctx, t, c, claiming("ident-d", "ident-e"))
	expectProfile(t, ctx, "ident-ns", "ident-d", identityView("ident-d",
		map[string]string{"id.k8s.io": "ident-e", "cluster.clusterset.k8s.io": "ident-e"}))
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("ident-e").ClusterSet("ident-set").Obj())
	expectProfile(t, ctx, "ident-ns", "ident-d", identityView("ident-d", map[string]string{"cluster.clusterset.k8s.io": "ident-d"}))
	expectProfile(t, ctx, "ident-ns", "ident-e", identityView("ident-e", map[string]string{"cluster.clusterset.k8s.io": "ident-e"}))
	expectConflictNotes(t, "ident-d", conflictNote("ident-e", "the name of ManagedCluster ident-e", "ident-d"))
}
