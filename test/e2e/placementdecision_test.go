//go:build linux

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
)

// placementLabel marks the clusters the test's Placement selects.
const placementLabel = "e2e.clusterprofile.open-cluster-management.io/gpu"

// TestPlacementDecisionsReferenceThePublishedProfiles: OCM's own placement
// controller decides a Placement in kueue-system (over the default set,
// bound there, selecting the clusters labelled placementLabel), and the
// bundle publishes its decisions as Cluster Inventory PlacementDecision
// slices (the chart installs their CRD) whose every reference resolves to a
// profile the hub published in kueue-system. A cluster that loses its label
// leaves OCM's decision and the slice within seconds; the Placement
// deleted, the garbage collector takes its slices.
func TestPlacementDecisionsReferenceThePublishedProfiles(t *testing.T) {
	ctx, g := begin(t)
	for _, cluster := range fleetClusters {
		labelCluster(ctx, t, g, cluster, "true")
		t.Cleanup(func() { labelCluster(context.Background(), t, withSuiteWaits(t), cluster, "") })
	}
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: consumerNS, Name: "e2e-gpus"},
		Spec: clusterv1beta1.PlacementSpec{ClusterSets: []string{defaultSet}, Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{placementLabel: "true"}}}}}}}
	g.Expect(hub.Create(ctx, placement)).To(Succeed())
	t.Cleanup(func() { _ = client.IgnoreNotFound(hub.Delete(context.Background(), placement)) })

	g.Eventually(func(g Gomega) { referencesResolve(ctx, g, placement, fleetClusters) }).Should(Succeed())
	listed := docsShellFor(t).run(t, docsrun.PlacementDecisionSlices, strings.NewReplacer("<namespace>", consumerNS, "<placement>", placement.Name))
	g.Expect(listed[0]).To(ContainSubstring(placement.Name+"-decision-1"), "consumers.md's listing")

	labelCluster(ctx, t, g, "cluster2", "")
	changed := time.Now()
	g.Eventually(func(g Gomega) { referencesResolve(ctx, g, placement, []string{"cluster1"}) }, 30*time.Second).Should(Succeed())
	t.Logf("cluster2 left the slices %s after it lost its label", time.Since(changed).Round(10*time.Millisecond))

	g.Expect(hub.Delete(ctx, placement)).To(Succeed())
	g.Eventually(func() ([]cpv1alpha1.PlacementDecision, error) {
		return slicesOf(ctx, placement)
	}).Should(BeEmpty(), "the garbage collector deletes the slices with their Placement")
}

// referencesResolve: placement has one slice, labelled for it, with one
// reference per cluster in want (OCM's order is by name here), each to the
// profile the hub publishes in the Placement's namespace.
func referencesResolve(ctx context.Context, g Gomega, placement *clusterv1beta1.Placement, want []string) {
	slices, err := slicesOf(ctx, placement)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(slices).To(HaveLen(1))
	s := slices[0]
	g.Expect(s.Labels).To(HaveKeyWithValue(cpv1alpha1.DecisionKeyLabel, string(placement.UID)))
	g.Expect(s.SchedulerName).To(Equal("open-cluster-management"))
	var referenced []string
	for _, d := range s.Decisions {
		profile := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(d.ClusterProfileRef.Namespace, d.ClusterProfileRef.Name), profile)).To(Succeed(), "the reference to %s", d.ClusterProfileRef)
		g.Expect(profile.Spec.ClusterManager.Name).To(Equal("open-cluster-management"))
		referenced = append(referenced, profile.Name)
	}
	g.Expect(referenced).To(ConsistOf(want))
}

func slicesOf(ctx context.Context, placement *clusterv1beta1.Placement) ([]cpv1alpha1.PlacementDecision, error) {
	list := &cpv1alpha1.PlacementDecisionList{}
	err := hub.List(ctx, list, client.InNamespace(placement.Namespace), client.MatchingLabels{cpv1alpha1.PlacementKeyLabel: placement.Name})
	return list.Items, err
}

// labelCluster sets placementLabel on a ManagedCluster, or removes it
// when value is empty.
func labelCluster(ctx context.Context, t *testing.T, g *WithT, name, value string) {
	t.Helper()
	g.Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, key("", name), mc); err != nil {
			return err
		}
		if value == "" {
			delete(mc.Labels, placementLabel)
		} else {
			mc.Labels[placementLabel] = value
		}
		return hub.Update(ctx, mc)
	}).Should(Succeed(), "labelling %s", name)
}
