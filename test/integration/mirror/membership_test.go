package mirror_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/onsi/gomega"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

func TestCreatesProfilesInEveryBoundNamespace(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	for _, ns := range []string{"create-kueue", "create-argocd", "create-unbound", "create-nobinding"} {
		framework.CreateNamespace(ctx, t, c, ns)
	}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("create-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("create-c1").ClusterSet("create-set").
		Version("v1.31.2").Claim("region.open-cluster-management.io", "eu-west").
		Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("create-outsider").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("create-kueue", "create-set").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("create-argocd", "create-set").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("create-unbound", "create-set").Bound(false).Obj())

	expectProfilesIn(t, ctx, "create-c1", "create-argocd", "create-kueue")
	expectProfile(t, ctx, "create-kueue", "create-c1", utiltesting.ProfileView{
		Labels: map[string]string{
			"x-k8s.io/cluster-manager":                "open-cluster-management",
			"open-cluster-management.io/cluster-name": "create-c1",
			"multicluster.x-k8s.io/clusterset":        "create-set",
		},
		DisplayName: "create-c1",
		Manager:     "open-cluster-management",
		Version:     "v1.31.2",
		Properties: map[string]string{"region.open-cluster-management.io": "eu-west",
			"cluster.clusterset.k8s.io": "create-c1", "clusterset.k8s.io": "create-set"},
		Conditions: map[string]utiltesting.ConditionView{
			"ControlPlaneHealthy": {Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "Managed cluster is available"},
			"Joined":              {Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "Managed cluster joined"},
		},
	})
	expectProfilesIn(t, ctx, "create-outsider")
}

func TestDeletesProfilesWhenBindingGoesOrUnbinds(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "unbind-a")
	framework.CreateNamespace(ctx, t, c, "unbind-b")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("unbind-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("unbind-c1").ClusterSet("unbind-set").Obj())
	bindingA := utiltesting.MakeBinding("unbind-a", "unbind-set").Bound(true).Obj()
	bindingB := utiltesting.MakeBinding("unbind-b", "unbind-set").Bound(true).Obj()
	framework.CreateBinding(ctx, t, c, bindingA)
	framework.CreateBinding(ctx, t, c, bindingB)
	expectProfilesIn(t, ctx, "unbind-c1", "unbind-a", "unbind-b")

	if err := c.Delete(ctx, bindingA); err != nil {
		t.Fatal(err)
	}
	expectProfilesIn(t, ctx, "unbind-c1", "unbind-b")

	framework.UpdateStatus(ctx, t, c, bindingB, func(b *clusterv1beta2.ManagedClusterSetBinding) {
		b.Status = utiltesting.MakeBinding(b.Namespace, b.Spec.ClusterSet).Bound(false).Obj().Status
	})
	expectProfilesIn(t, ctx, "unbind-c1")

	framework.UpdateStatus(ctx, t, c, bindingB, func(b *clusterv1beta2.ManagedClusterSetBinding) {
		b.Status = utiltesting.MakeBinding(b.Namespace, b.Spec.ClusterSet).Bound(true).Obj().Status
	})
	expectProfilesIn(t, ctx, "unbind-c1", "unbind-b")
}

func TestDeletesProfilesWhenSetGoesOrItsSelectorChanges(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "setdel-ns")
	selectorSet := utiltesting.MakeClusterSet("setdel-selector").
		Selector(metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}).Obj()
	exclusiveSet := utiltesting.MakeClusterSet("setdel-exclusive").Obj()
	framework.CreateClusterSet(ctx, t, c, selectorSet)
	framework.CreateClusterSet(ctx, t, c, exclusiveSet)
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("setdel-gold").Label("tier", "gold").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("setdel-ex").ClusterSet("setdel-exclusive").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("setdel-ns", "setdel-selector").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("setdel-ns", "setdel-exclusive").Bound(true).Obj())
	expectProfilesIn(t, ctx, "setdel-gold", "setdel-ns")
	expectProfilesIn(t, ctx, "setdel-ex", "setdel-ns")

	framework.Update(ctx, t, c, selectorSet, func(s *clusterv1beta2.ManagedClusterSet) {
		s.Spec.ClusterSelector.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "silver"}}
	})
	expectProfilesIn(t, ctx, "setdel-gold")

	if err := c.Delete(ctx, exclusiveSet); err != nil {
		t.Fatal(err)
	}
	expectProfilesIn(t, ctx, "setdel-ex")
}

func TestDeletesProfilesWhenClusterIsDeletedOrStartsDeleting(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "clusterdel-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("clusterdel-set").Obj())
	gone := utiltesting.MakeManagedCluster("clusterdel-gone").ClusterSet("clusterdel-set").Obj()
	finalized := utiltesting.MakeManagedCluster("clusterdel-finalized").ClusterSet("clusterdel-set").
		Finalizer("test.open-cluster-management.io/hold").Obj()
	framework.CreateCluster(ctx, t, c, gone)
	framework.CreateCluster(ctx, t, c, finalized)
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("clusterdel-ns", "clusterdel-set").Bound(true).Obj())
	expectProfilesIn(t, ctx, "clusterdel-gone", "clusterdel-ns")
	expectProfilesIn(t, ctx, "clusterdel-finalized", "clusterdel-ns")

	for _, cluster := range []client.Object{gone, finalized} {
		if err := c.Delete(ctx, cluster); err != nil {
			t.Fatal(err)
		}
	}
	expectProfilesIn(t, ctx, "clusterdel-gone")
	// Still there, held by its finalizer, but deleting: no profile.
	expectProfilesIn(t, ctx, "clusterdel-finalized")
	if err := c.Get(ctx, client.ObjectKeyFromObject(finalized), &clusterv1.ManagedCluster{}); err != nil {
		t.Fatalf("the finalized cluster should still exist: %v", err)
	}
}

func TestClusterInSeveralSetsOfOneNamespaceGetsOneProfile(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "dedupe-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("dedupe-exclusive").Obj())
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("dedupe-global").Selector(metav1.LabelSelector{}).Obj())
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("dedupe-expr").Selector(metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "staging"}}},
	}).Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("dedupe-c1").ClusterSet("dedupe-exclusive").Label("env", "prod").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("dedupe-c2").Label("env", "dev").Obj())
	for _, set := range []string{"dedupe-exclusive", "dedupe-global", "dedupe-expr"} {
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("dedupe-ns", set).Bound(true).Obj())
	}

	expectProfilesIn(t, ctx, "dedupe-c1", "dedupe-ns")
	expectProfilesIn(t, ctx, "dedupe-c2", "dedupe-ns") // only through the global set
	NewWithT(t).Eventually(func(g Gomega) {
		// The cluster's own exclusive set wins the label; otherwise the first by name.
		g.Expect(getProfile(g, ctx, "dedupe-ns", "dedupe-c1").Labels).To(HaveKeyWithValue("multicluster.x-k8s.io/clusterset", "dedupe-exclusive"))
		g.Expect(getProfile(g, ctx, "dedupe-ns", "dedupe-c2").Labels).To(HaveKeyWithValue("multicluster.x-k8s.io/clusterset", "dedupe-global"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestClusterLabelChangeMovesItOutOfAndIntoASet(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "move-gpu")
	framework.CreateNamespace(ctx, t, c, "move-exclusive")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("move-gpu").Selector(metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "gpu", Operator: metav1.LabelSelectorOpExists}},
	}).Obj())
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("move-exclusive").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("move-c1").Label("gpu", "a100").ClusterSet("move-exclusive").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("move-gpu", "move-gpu").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("move-exclusive", "move-exclusive").Bound(true).Obj())
	expectProfilesIn(t, ctx, "move-c1", "move-exclusive", "move-gpu")

	framework.UpdateCluster(ctx, t, c, "move-c1", func(mc *clusterv1.ManagedCluster) {
		delete(mc.Labels, "gpu")
		delete(mc.Labels, clusterv1beta2.ClusterSetLabel)
	})
	expectProfilesIn(t, ctx, "move-c1")

	framework.UpdateCluster(ctx, t, c, "move-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Labels = map[string]string{"gpu": "h100"}
	})
	expectProfilesIn(t, ctx, "move-c1", "move-gpu")
}

func TestLeavesTerminatingNamespacesAlone(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "term-ns")
	framework.CreateNamespace(ctx, t, c, "term-later")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("term-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("term-c1").ClusterSet("term-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("term-ns", "term-set").Bound(true).Obj())
	expectProfilesIn(t, ctx, "term-c1", "term-ns")

	// envtest runs no namespace controller: a deleted namespace stays
	// Terminating, with its binding and profile, for the rest of the run.
	deleteNamespace(ctx, t, "term-ns")
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("term-c2").ClusterSet("term-set").Version("v1.30.0").Obj())
	framework.UpdateStatus(ctx, t, c, utiltesting.MakeManagedCluster("term-c1").Obj(), func(mc *clusterv1.ManagedCluster) {
		mc.Status.Version.Kubernetes = "v1.32.0"
	})
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(profileNamespaces(g, ctx, "term-c1")).To(Equal([]string{"term-ns"}))
		g.Expect(profileNamespaces(g, ctx, "term-c2")).To(BeEmpty())
		g.Expect(getProfile(g, ctx, "term-ns", "term-c1").Status.Version.Kubernetes).To(BeEmpty())
	}, "2s", "100ms").Should(Succeed())
}

// TestBindingInClusterNamespacePublishesNothing: a cluster's agents hold
// rights in its hub namespace, so a binding there publishes nothing (it
// still serves Placement) and says so on the binding, once.
func TestBindingInClusterNamespacePublishesNothing(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "cns-team")
	// As OCM's registration creates a cluster's namespace.
	clusterNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cns-c2",
		Labels: map[string]string{"open-cluster-management.io/cluster-name": "cns-c2"}}}
	if err := c.Create(ctx, clusterNS); err != nil {
		t.Fatal(err)
	}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("cns-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("cns-c1").ClusterSet("cns-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("cns-c2").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("cns-c2", "cns-set").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("cns-team", "cns-set").Bound(true).Obj())

	expectProfilesIn(t, ctx, "cns-c1", "cns-team")
	want := []string{"Namespace cns-c2 is a ManagedCluster's namespace (label open-cluster-management.io/cluster-name), " +
		"where that cluster's agents hold rights: no ClusterProfile, access provider entry or token copy is published through this binding; it still serves Placement"}
	notes := func(g Gomega, namespace string) []string {
		notes := []string{}
		for _, e := range eventsAbout(g, ctx, "ManagedClusterSetBinding", "cns-set", "ClusterNamespaceNotPublished") {
			if e.Regarding.Namespace == namespace {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}
	NewWithT(t).Eventually(func(g Gomega) []string { return notes(g, "cns-c2") }, framework.Timeout, framework.Interval).Should(Equal(want))
	// Other changes that reconcile the cluster neither publish there nor report again.
	framework.UpdateCluster(ctx, t, c, "cns-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Annotations = map[string]string{"touched": "yes"}
	})
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(profileNamespaces(g, ctx, "cns-c1")).To(Equal([]string{"cns-team"}))
		g.Expect(notes(g, "cns-c2")).To(Equal(want))
		g.Expect(notes(g, "cns-team")).To(BeEmpty())
	}, "2s", "200ms").Should(Succeed())

	// An admin takes the label off: the namespace is an ordinary one.
	framework.Update(ctx, t, c, clusterNS, func(ns *corev1.Namespace) {
		delete(ns.Labels, "open-cluster-management.io/cluster-name")
	})
	expectProfilesIn(t, ctx, "cns-c1", "cns-c2", "cns-team")

	// And back on: the profile there goes.
	framework.Update(ctx, t, c, clusterNS, func(ns *corev1.Namespace) {
		ns.Labels = map[string]string{"open-cluster-management.io/cluster-name": "cns-c2"}
	})
	expectProfilesIn(t, ctx, "cns-c1", "cns-team")
}
