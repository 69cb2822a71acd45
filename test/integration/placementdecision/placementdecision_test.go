// Package placementdecision_test runs the publishing of placement
// decisions against a real API server with the real manager. OCM's
// placement controller does not run here: the tests write OCM's
// PlacementDecisions as it does (named <placement>-decision-<n>, labelled
// with the Placement, controlled by it), and the profiles as a mirror does.
package placementdecision_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/placementdecision"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

// The mirror is off: the tests publish each profile themselves, to leave
// one out.
var gates = map[string]bool{string(features.ClusterProfile): false, string(features.ClusterProfilePlacementDecision): true}

// within is how soon the slices follow a change: "within seconds".
const within = 5 * time.Second

const manager = "open-cluster-management"

// view is what a consumer reads of a Placement's slices: by slice name,
// the profiles each references, in order.
type view map[string][]string

func slicesOf(g Gomega, ctx context.Context, namespace, placement string) view {
	list := &cpv1alpha1.PlacementDecisionList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace),
		client.MatchingLabels{cpv1alpha1.PlacementKeyLabel: placement})).To(Succeed())
	out := view{}
	for _, s := range list.Items {
		refs := []string{}
		for _, d := range s.Decisions {
			g.Expect(d.ClusterProfileRef.Namespace).To(Equal(namespace), "slice %s", s.Name)
			refs = append(refs, d.ClusterProfileRef.Name)
		}
		out[s.Name] = refs
	}
	return out
}

func expectSlices(t *testing.T, ctx context.Context, namespace, placement string, wait time.Duration, want view) time.Duration {
	t.Helper()
	start := time.Now()
	NewWithT(t).Eventually(func(g Gomega) view { return slicesOf(g, ctx, namespace, placement) },
		wait, 20*time.Millisecond).Should(Equal(want), "slices of %s/%s", namespace, placement)
	return time.Since(start)
}

// names are prefix-000, prefix-001, ...
func names(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s-%03d", prefix, i))
	}
	return out
}

// fleet makes clusters in set, binds set into namespace, and publishes
// each cluster's profile there as a mirror would, except those in
// unpublished.
func fleet(ctx context.Context, t *testing.T, namespace, set string, clusters []string, unpublished ...string) {
	t.Helper()
	c := env.Client
	framework.CreateNamespace(ctx, t, c, namespace)
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(set).Obj())
	for _, name := range clusters {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(name).ClusterSet(set).Obj())
		if !slices.Contains(unpublished, name) {
			framework.CreateProfile(ctx, t, c, utiltesting.MakeClusterProfile(namespace, name, manager).Obj())
		}
	}
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(namespace, set).Bound(true).Obj())
}

// placement creates a Placement and OCM's decisions of it: clusters, 100
// to a PlacementDecision, as OCM's scheduler writes them.
func placement(ctx context.Context, t *testing.T, namespace, name string, clusters []string) *clusterv1beta1.Placement {
	t.Helper()
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	NewWithT(t).Expect(env.Client.Create(ctx, p)).To(Succeed())
	decide(ctx, t, p, clusters)
	return p
}

// decide writes OCM's decisions of p: clusters, 100 to a PlacementDecision,
// deleting the PlacementDecisions no longer needed.
func decide(ctx context.Context, t *testing.T, p *clusterv1beta1.Placement, clusters []string) {
	t.Helper()
	g := NewWithT(t)
	chunks := slices.Collect(slices.Chunk(clusters, 100))
	if len(chunks) == 0 {
		chunks = [][]string{{}}
	}
	for i, chunk := range chunks {
		key := types.NamespacedName{Namespace: p.Namespace, Name: fmt.Sprintf("%s-decision-%d", p.Name, i+1)}
		pd := &clusterv1beta1.PlacementDecision{}
		if err := env.Client.Get(ctx, key, pd); err != nil {
			pd = &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{clusterv1beta1.PlacementLabel: p.Name, clusterv1beta1.DecisionGroupIndexLabel: "0"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "Placement",
					Name: p.Name, UID: p.UID, Controller: ptr.To(true)}}}}
			g.Expect(env.Client.Create(ctx, pd)).To(Succeed())
		}
		framework.UpdateStatus(ctx, t, env.Client, pd, func(pd *clusterv1beta1.PlacementDecision) {
			pd.Status.Decisions = []clusterv1beta1.ClusterDecision{}
			for _, c := range chunk {
				pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "picked"})
			}
		})
	}
	for i := len(chunks); ; i++ {
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: fmt.Sprintf("%s-decision-%d", p.Name, i+1)}}
		if err := env.Client.Delete(ctx, pd); err != nil {
			return
		}
	}
}

// TestSlicesFollowOCMsDecisionsWithOneWriteEach: a Placement choosing 150
// clusters gets two slices referencing their profiles, in OCM's order; a
// cluster OCM adds, one it drops, a profile that appears, a cluster that
// leaves the set, each changes the slices within seconds with one write
// per slice that changes; a cluster whose profile is not there is left out
// and named in an Event on the Placement; a slice a tenant forges or edits
// is put right; the Placement deleted, its slices go.
func TestSlicesFollowOCMsDecisionsWithOneWriteEach(t *testing.T) {
	ctx := framework.ContextFor(t)
	g := NewWithT(t)
	const ns, set = "pd-team", "pd-fleet"
	clusters := names("pd-c", 0, 152)
	fleet(ctx, t, ns, set, clusters, "pd-c-150")
	// pd-other is in a set the namespace does not bind: a stale decision.
	framework.CreateCluster(ctx, t, env.Client, utiltesting.MakeManagedCluster("pd-other").ClusterSet("pd-unbound-set").Obj())
	p := placement(ctx, t, ns, "gpus", append(clusters[:150:150], "pd-other"))
	counter := framework.NewRequestCounter("placementdecisions", "pd-")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates, Counter: counter})

	took := expectSlices(t, ctx, ns, "gpus", framework.Timeout, view{"gpus-decision-1": clusters[:100], "gpus-decision-2": clusters[100:150]})
	t.Logf("first slices after %s", took)
	g.Expect(counter.Settled()).To(Equal(2), "one write per slice: %v", counter.Requests())
	g.Eventually(func() ([]string, error) {
		events, err := framework.EventsAbout(ctx, env.Client, "Placement", "gpus", placementdecision.ReasonClustersLeftOut)
		notes := []string{}
		for _, e := range events {
			notes = append(notes, e.Note)
		}
		return notes, err
	}, framework.Timeout, framework.Interval).Should(ConsistOf(ContainSubstring(
		"every reference resolves: pd-other (not published in this namespace: no binding here publishes a set that picks it")))
	s := &cpv1alpha1.PlacementDecision{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gpus-decision-2"}, s)).To(Succeed())
	g.Expect(s.Labels).To(Equal(map[string]string{"x-k8s.io/cluster-manager": manager, "multicluster.x-k8s.io/decision-key": string(p.UID),
		"multicluster.x-k8s.io/decision-index": "1", "multicluster.x-k8s.io/placement-key": "gpus"}))
	g.Expect(s.SchedulerName).To(Equal("open-cluster-management"))
	g.Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", p.UID)))
	g.Expect(s.Decisions[0]).To(Equal(cpv1alpha1.ClusterDecision{
		ClusterProfileRef: cpv1alpha1.ClusterProfileReference{Name: "pd-c-100", Namespace: ns}, Reason: "picked"}))

	steps := []struct {
		name   string
		change func()
		want   view
		writes int
		// leftOut counts the clusters left out, by reason (the metric).
		leftOut [2]float64
	}{
		{"OCM adds a cluster: the last slice", func() { decide(ctx, t, p, append(clusters[:150:150], "pd-c-151")) },
			view{"gpus-decision-1": clusters[:100], "gpus-decision-2": append(clusters[100:150:150], "pd-c-151")}, 1, [2]float64{0, 0}},
		{"OCM adds one whose profile is not there: no write", func() { decide(ctx, t, p, clusters[:152]) },
			view{"gpus-decision-1": clusters[:100], "gpus-decision-2": append(clusters[100:150:150], "pd-c-151")}, 0, [2]float64{0, 1}},
		{"its profile appears: one write", func() {
			framework.CreateProfile(ctx, t, env.Client, utiltesting.MakeClusterProfile(ns, "pd-c-150", manager).Obj())
		}, view{"gpus-decision-1": clusters[:100], "gpus-decision-2": clusters[100:152]}, 1, [2]float64{0, 0}},
		{"a cluster leaves the set: it goes from its slice, the rest close up", func() {
			framework.UpdateCluster(ctx, t, env.Client, "pd-c-010", func(mc *clusterv1.ManagedCluster) {
				mc.Labels[clusterv1beta2.ClusterSetLabel] = "elsewhere"
			})
		}, view{"gpus-decision-1": append(slices.Clone(clusters[:10]), clusters[11:101]...), "gpus-decision-2": clusters[101:152]}, 2, [2]float64{1, 0}},
		{"a tenant edits a slice: put right", func() {
			edited := &cpv1alpha1.PlacementDecision{}
			g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gpus-decision-2"}, edited)).To(Succeed())
			framework.Update(ctx, t, env.Client, edited, func(s *cpv1alpha1.PlacementDecision) {
				s.Decisions = append(s.Decisions, cpv1alpha1.ClusterDecision{ClusterProfileRef: cpv1alpha1.ClusterProfileReference{Name: "elsewhere"}})
			})
		}, view{"gpus-decision-1": append(slices.Clone(clusters[:10]), clusters[11:101]...), "gpus-decision-2": clusters[101:152]}, 1, [2]float64{1, 0}},
		{"a tenant forges a slice of the Placement: deleted", func() {
			forged := &cpv1alpha1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpus-decision-9",
				Labels: map[string]string{"x-k8s.io/cluster-manager": manager, "multicluster.x-k8s.io/placement-key": "gpus"}},
				Decisions: []cpv1alpha1.ClusterDecision{{ClusterProfileRef: cpv1alpha1.ClusterProfileReference{Name: "pd-c-010"}}}}
			g.Expect(env.Client.Create(ctx, forged)).To(Succeed())
		}, view{"gpus-decision-1": append(slices.Clone(clusters[:10]), clusters[11:101]...), "gpus-decision-2": clusters[101:152]}, 1, [2]float64{1, 0}},
	}
	for _, step := range steps {
		before := counter.Settled()
		step.change()
		took := expectSlices(t, ctx, ns, "gpus", within, step.want)
		time.Sleep(time.Second) // a stray second write would come now
		g.Expect(counter.Settled()-before).To(Equal(step.writes), "%s: the manager's writes: %v", step.name, counter.Requests()[before:])
		t.Logf("%s: the slices followed after %s", step.name, took)
		for i, reason := range []string{placementdecision.LeftOutUnpublished, placementdecision.LeftOutNoProfile} {
			value, _, err := framework.MetricValue("clusterprofile_placement_clusters_left_out", map[string]string{"reason": reason})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(value).To(Equal(step.leftOut[i]), "%s: clusters left out, %s", step.name, reason)
		}
	}

	g.Expect(env.Client.Delete(ctx, p)).To(Succeed())
	expectSlices(t, ctx, ns, "gpus", within, view{})
}

// TestAFleetPublishedOneByOneGetsOneWritePerSlice: a Placement that chose
// 150 clusters before their profiles are there (a set just bound, a cold
// start) gets its two slices written once each, complete, when the last
// profile appears, not once per profile.
func TestAFleetPublishedOneByOneGetsOneWritePerSlice(t *testing.T) {
	ctx := framework.ContextFor(t)
	const ns, set = "pd-fleet-ns", "pd-fleet-set"
	clusters := names("pd-f", 0, 150)
	fleet(ctx, t, ns, set, clusters, clusters...)
	placement(ctx, t, ns, "all", clusters)
	counter := framework.NewRequestCounter("placementdecisions", "pd-fleet")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates, Counter: counter})

	// As the mirror publishes a fleet: a profile every few milliseconds.
	for _, name := range clusters {
		framework.CreateProfile(ctx, t, env.Client, utiltesting.MakeClusterProfile(ns, name, manager).Obj())
		time.Sleep(20 * time.Millisecond)
	}
	took := expectSlices(t, ctx, ns, "all", framework.Timeout, view{"all-decision-1": clusters[:100], "all-decision-2": clusters[100:]})
	t.Logf("slices after %s", took)
	NewWithT(t).Expect(counter.Settled()).To(Equal(2), "one write per slice: %v", counter.Requests())
}

// TestTheNamespaceUnboundTakesTheSlices: a binding deleted takes the
// Placement's slices with it (the namespace publishes no profile); bound
// again, they come back.
func TestTheNamespaceUnboundTakesTheSlices(t *testing.T) {
	ctx := framework.ContextFor(t)
	const ns, set = "pd-unbound", "pd-unbound-set"
	clusters := names("pd-u", 0, 2)
	fleet(ctx, t, ns, set, clusters)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})
	placement(ctx, t, ns, "all", clusters)
	expectSlices(t, ctx, ns, "all", framework.Timeout, view{"all-decision-1": clusters})

	NewWithT(t).Expect(env.Client.Delete(ctx, utiltesting.MakeBinding(ns, set).Obj())).To(Succeed())
	expectSlices(t, ctx, ns, "all", within, view{})
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(ns, set).Bound(true).Obj())
	expectSlices(t, ctx, ns, "all", within, view{"all-decision-1": clusters})
}

// TestOCMsOwnWriterOnTheBundleYields: while a ClusterManager turns on OCM's
// placement controller's own writer of the slices, the manager writes
// none (a change of OCM's decisions is not followed); turned off, it takes
// the slices over within seconds.
func TestOCMsOwnWriterOnTheBundleYields(t *testing.T) {
	ctx := framework.ContextFor(t)
	g := NewWithT(t)
	const ns, set = "pd-yield", "pd-yield-set"
	clusters := names("pd-y", 0, 3)
	fleet(ctx, t, ns, set, clusters)
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "pd-cluster-manager"},
		Spec: operatorv1.ClusterManagerSpec{PlacementConfiguration: &operatorv1.PlacementConfiguration{
			FeatureGates: []operatorv1.FeatureGate{{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}}}}}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cm) })
	counter := framework.NewRequestCounter("placementdecisions", "pd-yield")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates, Counter: counter})
	placement(ctx, t, ns, "some", clusters[:2])
	g.Consistently(func(g Gomega) view { return slicesOf(g, ctx, ns, "some") }, 2*time.Second).Should(BeEmpty())
	g.Expect(counter.Writes()).To(BeZero(), "writes while OCM's writer is on: %v", counter.Requests())

	framework.Update(ctx, t, env.Client, cm, func(cm *operatorv1.ClusterManager) {
		cm.Spec.PlacementConfiguration.FeatureGates[0].Mode = operatorv1.FeatureGateModeTypeDisable
	})
	expectSlices(t, ctx, ns, "some", within, view{"some-decision-1": clusters[:2]})
}
