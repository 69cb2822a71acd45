package mirror_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"

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
func conflictNote(id, holder string, byName bool) string {
	how := "its recorded id.k8s.io claim"
	if byName {
		how = "its name"
	}
	return `The cluster id "` + id + `" is held by ManagedCluster ` + holder + ` (` + how + `), which published it first: ` +
		`ids stay with their holder, so this cluster's ClusterProfiles carry no cluster.clusterset.k8s.io property (nor id.k8s.io) ` +
		`until ` + holder + ` releases it (drops the claim, or is deleted)`
}

// expectConflictNotes waits until the cluster's ClusterIDConflict Events
// carry exactly these notes. (A manager restarted reports again; a later
// Event of the same reason joins the first one's series, which keeps the
// first note.)
func expectConflictNotes(t *testing.T, cluster string, want ...string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	NewWithT(t).Eventually(func(g Gomega) []string {
		var notes []string
		for _, e := range eventsAbout(g, ctx, "ManagedCluster", cluster, "ClusterIDConflict") {
			notes = append(notes, e.Note)
		}
		slices.Sort(notes)
		return slices.Compact(notes)
	}, framework.Timeout, framework.Interval).Should(Equal(want), "ClusterIDConflict Events of %s", cluster)
}

// expectRecord waits until the id's record in namespace names holder
// ("" for no record).
func expectRecord(t *testing.T, namespace, id, holder string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	NewWithT(t).Eventually(func(g Gomega) string {
		lease := &coordinationv1.Lease{}
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: mirror.IDRecordName(id)}, lease)
		if apierrors.IsNotFound(err) {
			return ""
		}
		g.Expect(err).NotTo(HaveOccurred())
		record, ok := mirror.RecordOf(lease)
		g.Expect(ok).To(BeTrue(), "Lease %s is an id record", lease.Name)
		g.Expect(record.ID).To(Equal(id))
		return record.Holder
	}, framework.Timeout, framework.Interval).Should(Equal(holder), "the record of id %s", id)
}

func dropClaims(mc *clusterv1.ManagedCluster) { mc.Status.ClusterClaims = nil }

// TestClusterIDsAreSticky plays klusterlets, which pick their cluster's name
// and claims, and a tenant: an id stays with the cluster that published it
// first, across a restart of the manager, whatever newcomers are named or
// claim and whatever a tenant does to the profiles; the holder deleted, the
// cluster named so takes it.
func TestClusterIDsAreSticky(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	const own = "ident-manager" // the manager's own namespace: the id records
	framework.CreateNamespace(ctx, t, c, own)
	stop := framework.StartManager(t, env, framework.ManagerOptions{Namespace: own})
	framework.CreateNamespace(ctx, t, c, "ident-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("ident-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("ident-ns", "ident-set").Bound(true).Obj())
	claiming := func(name, id string) *clusterv1.ManagedCluster {
		return utiltesting.MakeManagedCluster(name).ClusterSet("ident-set").Claim("id.k8s.io", id).Obj()
	}
	holds := identityView("ident-a", map[string]string{"id.k8s.io": "ident-prod", "cluster.clusterset.k8s.io": "ident-prod"})

	// A claims an id nobody holds: recorded, then published.
	framework.CreateCluster(ctx, t, c, claiming("ident-a", "ident-prod"))
	expectProfile(t, ctx, "ident-ns", "ident-a", holds)
	expectRecord(t, own, "ident-prod", "ident-a")

	// A klusterlet registers a cluster named like the published id: it
	// publishes none (its profile still exists), and is told why.
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("ident-prod").ClusterSet("ident-set").Obj())
	expectProfile(t, ctx, "ident-ns", "ident-prod", identityView("ident-prod", map[string]string{}))
	expectConflictNotes(t, "ident-prod", conflictNote("ident-prod", "ident-a", false))
	expectProfile(t, ctx, "ident-ns", "ident-a", holds)
	notes := doctor.Diagnose(doctor.Observed{Profile: getProfile(NewWithT(t), ctx, "ident-ns", "ident-prod"),
		Copy: doctor.CopyRead{Err: apierrors.NewNotFound(corev1.Resource("secrets"), "ident-prod-msa")}}, doctor.Settings{Namespace: "ident-ns"}).Notes
	NewWithT(t).Expect(notes).To(ContainElement(HavePrefix("The profile carries no cluster.clusterset.k8s.io")), "the doctor says why")

	// Another claims it too: refused, its raw claim left out as well.
	framework.CreateCluster(ctx, t, c, claiming("ident-b", "ident-prod"))
	expectProfile(t, ctx, "ident-ns", "ident-b", identityView("ident-b", map[string]string{}))
	expectConflictNotes(t, "ident-b", conflictNote("ident-prod", "ident-a", false))

	// A tenant who may write profiles in the namespace forges the id on the
	// newcomer's profile and deletes the holder's: that misleads only the
	// tenant's own namespace; the id stays with its holder, whose profile
	// the mirror publishes again.
	forgeProperty(t, "ident-ns", "ident-prod", "cluster.clusterset.k8s.io", "ident-prod")
	NewWithT(t).Expect(c.Delete(ctx, getProfile(NewWithT(t), ctx, "ident-ns", "ident-a"))).To(Succeed())
	expectProfile(t, ctx, "ident-ns", "ident-a", holds)
	expectRecord(t, own, "ident-prod", "ident-a")
	expectConflictNotes(t, "ident-prod", conflictNote("ident-prod", "ident-a", false))

	// The manager restarts: the holder keeps its id (read back from its
	// record), the others still publish none.
	stop()
	framework.StartManager(t, env, framework.ManagerOptions{Namespace: own})
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(cmp.Diff(holds, utiltesting.ViewOf(getProfile(g, ctx, "ident-ns", "ident-a")))).To(BeEmpty())
		g.Expect(utiltesting.ViewOf(getProfile(g, ctx, "ident-ns", "ident-b")).Properties).NotTo(HaveKey("cluster.clusterset.k8s.io"))
	}, "3s", "200ms").Should(Succeed())
	expectRecord(t, own, "ident-prod", "ident-a")

	// The holder drops its claim: its id goes to its name, and the cluster
	// named like the released id takes it, its own name; the other
	// claimant stays refused, by that name now.
	framework.UpdateClusterStatus(ctx, t, c, "ident-a", dropClaims)
	expectProfile(t, ctx, "ident-ns", "ident-a", identityView("ident-a", map[string]string{"cluster.clusterset.k8s.io": "ident-a"}))
	expectRecord(t, own, "ident-prod", "")
	NewWithT(t).Eventually(func(g Gomega) string {
		return utiltesting.ViewOf(getProfile(g, ctx, "ident-ns", "ident-prod")).Properties["cluster.clusterset.k8s.io"]
	}, framework.Timeout, framework.Interval).Should(Equal("ident-prod"))
	expectProfile(t, ctx, "ident-ns", "ident-b", identityView("ident-b", map[string]string{}))
}

// TestAnIDIsReleasedWhenItsHolderIsGone: a claimed id's holder deleted, its
// record goes once the ManagedCluster is gone (not while it is being
// deleted: its profiles linger), and the cluster named like the id publishes
// it.
func TestAnIDIsReleasedWhenItsHolderIsGone(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	const own = "gone-manager"
	framework.CreateNamespace(ctx, t, c, own)
	framework.StartManager(t, env, framework.ManagerOptions{Namespace: own})
	framework.CreateNamespace(ctx, t, c, "gone-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("ident-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("gone-ns", "ident-set").Bound(true).Obj())
	holder := utiltesting.MakeManagedCluster("gone-a").ClusterSet("ident-set").Claim("id.k8s.io", "gone-prod").
		Finalizer("test.open-cluster-management.io/hold").Obj()
	framework.CreateCluster(ctx, t, c, holder)
	expectRecord(t, own, "gone-prod", "gone-a")
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("gone-prod").ClusterSet("ident-set").Obj())
	expectConflictNotes(t, "gone-prod", conflictNote("gone-prod", "gone-a", false))

	NewWithT(t).Expect(c.Delete(ctx, holder)).To(Succeed())
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(utiltesting.ViewOf(getProfile(g, ctx, "gone-ns", "gone-prod")).Properties).NotTo(HaveKey("cluster.clusterset.k8s.io"))
	}, "2s", "200ms").Should(Succeed(), "held while the holder is being deleted")
	framework.UpdateCluster(ctx, t, c, "gone-a", func(mc *clusterv1.ManagedCluster) { mc.Finalizers = nil })
	expectRecord(t, own, "gone-prod", "")
	expectProfile(t, ctx, "gone-ns", "gone-prod", utiltesting.ProfileView{
		Labels: map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
			"open-cluster-management.io/cluster-name": "gone-prod", "multicluster.x-k8s.io/clusterset": "ident-set"},
		DisplayName: "gone-prod", Manager: "open-cluster-management",
		Properties: map[string]string{"cluster.clusterset.k8s.io": "gone-prod", "clusterset.k8s.io": "ident-set"},
		Conditions: map[string]utiltesting.ConditionView{},
	})
}

// forgeProperty writes a property on a profile's status as a tenant who may
// write it would (another field manager).
func forgeProperty(t *testing.T, namespace, name, property, value string) {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Expect(env.Client.Get(framework.ContextFor(t), types.NamespacedName{Namespace: namespace, Name: name}, p)).To(Succeed())
	p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: property, Value: value})
	NewWithT(t).Expect(env.Client.Status().Update(framework.ContextFor(t), p, client.FieldOwner("tenant"))).To(Succeed())
}
