package multikueue_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var gates = map[string]bool{string(features.ClusterProfile): true, string(features.ClusterProfileMultiKueue): true}

// handWritten is a MultiKueueCluster a Kueue admin wrote, from a kubeconfig.
func handWritten(ctx context.Context, t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"clusterSource": map[string]any{
			"kubeConfig": map[string]any{"location": name + "-kubeconfig", "locationType": "Secret"}}},
	}}
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatalf("creating MultiKueueCluster %s: %v", name, err)
	}
	return u
}

func handWrittenView(name string) kueueView {
	return kueueView{Spec: map[string]any{"clusterSource": map[string]any{
		"kubeConfig": map[string]any{"location": name + "-kubeconfig", "locationType": "Secret"}}}}
}

// TestKeepsOneMultiKueueClusterPerPublishedProfile: every profile the hub
// publishes in Kueue's namespace gets a MultiKueueCluster, listed in the
// MultiKueueConfig; a profile that goes takes its MultiKueueCluster along;
// a MultiKueueCluster someone else wrote under a cluster's name is never
// touched, and reported once.
func TestKeepsOneMultiKueueClusterPerPublishedProfile(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	handWritten(ctx, t, "mk-c3")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates,
		MultiKueue: multikueue.Options{Namespace: "mk-kueue", ConfigName: "mk-fleet"}})
	framework.CreateNamespace(ctx, t, c, "mk-kueue")
	framework.CreateNamespace(ctx, t, c, "mk-other")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("mk-set").Obj())
	for _, name := range []string{"mk-c1", "mk-c2", "mk-c3"} {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(name).ClusterSet("mk-set").Obj())
	}
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("mk-kueue", "mk-set").Bound(true).Obj())
	// Profiles elsewhere are no business of Kueue's.
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("mk-other-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("mk-c4").ClusterSet("mk-other-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("mk-other", "mk-other-set").Bound(true).Obj())

	expectKueueObjects(t, ctx, "MultiKueueCluster", "mk-", map[string]kueueView{
		"mk-c1": ours("mk-c1"), "mk-c2": ours("mk-c2"), "mk-c3": handWrittenView("mk-c3")})
	expectKueueObjects(t, ctx, "MultiKueueConfig", "mk-", map[string]kueueView{"mk-fleet": ourConfig("mk-c1", "mk-c2")})
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ClusterProfile", "mk-c3", multikueue.ReasonNameClash)).To(HaveLen(1))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Someone edits ours: it is restored. mk-c2 leaves the set: its profile
	// goes, and so does its MultiKueueCluster.
	framework.Update(ctx, t, c, kueueObject("MultiKueueCluster", "mk-c1"), func(u *unstructured.Unstructured) {
		u.Object["spec"] = map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": "elsewhere"}}}
	})
	framework.UpdateCluster(ctx, t, c, "mk-c2", func(mc *clusterv1.ManagedCluster) {
		mc.Labels[clusterv1beta2.ClusterSetLabel] = "mk-other-set"
	})
	expectKueueObjects(t, ctx, "MultiKueueCluster", "mk-", map[string]kueueView{
		"mk-c1": ours("mk-c1"), "mk-c3": handWrittenView("mk-c3")})
	expectKueueObjects(t, ctx, "MultiKueueConfig", "mk-", map[string]kueueView{"mk-fleet": ourConfig("mk-c1")})

	// The clash is not reported again, however often the profile changes.
	framework.UpdateCluster(ctx, t, c, "mk-c3", func(mc *clusterv1.ManagedCluster) { mc.Annotations = map[string]string{"touched": "yes"} })
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ClusterProfile", "mk-c3", multikueue.ReasonNameClash)).To(HaveLen(1))
	}, 2*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestGateOffCleanupDeletesOnlyOurs: with the gate off and cleanup asked
// for, the manager deletes the MultiKueueClusters and config it created,
// and nothing else, even an object carrying our label that we never wrote.
func TestGateOffCleanupDeletesOnlyOurs(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: gates,
		MultiKueue: multikueue.Options{Namespace: "off-kueue", ConfigName: "off-fleet"}})
	framework.CreateNamespace(ctx, t, c, "off-kueue")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("off-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("off-c1").ClusterSet("off-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("off-kueue", "off-set").Bound(true).Obj())
	expectKueueObjects(t, ctx, "MultiKueueCluster", "off-", map[string]kueueView{"off-c1": ours("off-c1")})
	expectKueueObjects(t, ctx, "MultiKueueConfig", "off-", map[string]kueueView{"off-fleet": ourConfig("off-c1")})
	stop()
	planted := handWritten(ctx, t, "off-planted")
	framework.Update(ctx, t, c, planted, func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{multikueue.LabelCreatedBy: "open-cluster-management"})
	})

	framework.StartManager(t, env, framework.ManagerOptions{CleanupDisabled: true,
		Gates: map[string]bool{string(features.ClusterProfileMultiKueue): false}})

	plantedView := handWrittenView("off-planted")
	plantedView.Labels = map[string]string{multikueue.LabelCreatedBy: "open-cluster-management"}
	expectKueueObjects(t, ctx, "MultiKueueCluster", "off-", map[string]kueueView{"off-planted": plantedView})
	expectKueueObjects(t, ctx, "MultiKueueConfig", "off-", map[string]kueueView{})
}

func kueueObject(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(multikueue.GroupVersion.WithKind(kind))
	u.SetName(name)
	return u
}
