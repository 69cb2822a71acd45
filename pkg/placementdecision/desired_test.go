package placementdecision

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

const testManager = "open-cluster-management"

func testPlacement() *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gpus", UID: "uid-1"}}
}

// clusterNames are c000, c001, ... : n of them.
func clusterNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%03d", i)
	}
	return names
}

// ocmDecisions are the Placement's PlacementDecisions as OCM writes them:
// <placement>-decision-<n> from 1, at most 100 clusters each, in group 0.
func ocmDecisions(placement *clusterv1beta1.Placement, clusters []string) []clusterv1beta1.PlacementDecision {
	var out []clusterv1beta1.PlacementDecision
	for i := 0; i == 0 || i*100 < len(clusters); i++ {
		pd := ocmDecision(placement, i+1, 0)
		for _, c := range clusters[i*100 : min(len(clusters), (i+1)*100)] {
			pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "picked"})
		}
		out = append(out, pd)
	}
	return out
}

func ocmDecision(placement *clusterv1beta1.Placement, number, group int, clusters ...string) clusterv1beta1.PlacementDecision {
	pd := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
		Namespace: placement.Namespace, Name: placement.Name + "-decision-" + strconv.Itoa(number),
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placement.Name, clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(group)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "Placement",
			Name: placement.Name, UID: placement.UID, Controller: ptr.To(true)}},
	}}
	for _, c := range clusters {
		pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "picked"})
	}
	return pd
}

// wantSlice is slice index of the test Placement with these clusters.
func wantSlice(index int, clusters ...string) *cpv1alpha1.PlacementDecision {
	decisions := []cpv1alpha1.ClusterDecision{}
	for _, c := range clusters {
		decisions = append(decisions, cpv1alpha1.ClusterDecision{
			ClusterProfileRef: cpv1alpha1.ClusterProfileReference{Name: c, Namespace: "team"}, Reason: "picked"})
	}
	return &cpv1alpha1.PlacementDecision{
		TypeMeta: metav1.TypeMeta{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "PlacementDecision"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gpus-decision-" + strconv.Itoa(index+1),
			Labels: map[string]string{
				"x-k8s.io/cluster-manager":             testManager,
				"multicluster.x-k8s.io/decision-key":   "uid-1",
				"multicluster.x-k8s.io/decision-index": strconv.Itoa(index),
				"multicluster.x-k8s.io/placement-key":  "gpus",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "Placement",
				Name: "gpus", UID: "uid-1", Controller: ptr.To(true)}},
		},
		Decisions:     decisions,
		SchedulerName: "open-cluster-management",
	}
}

// wantSlices are the slices of clusters, 100 to a slice.
func wantSlices(clusters []string) []*cpv1alpha1.PlacementDecision {
	var out []*cpv1alpha1.PlacementDecision
	for i := 0; i == 0 || i*100 < len(clusters); i++ {
		out = append(out, wantSlice(i, clusters[i*100:min(len(clusters), (i+1)*100)]...))
	}
	return out
}

func TestDesiredSlices(t *testing.T) {
	placement := testPlacement()
	cases := map[string]struct {
		world World
		want  Desired
	}{
		"no cluster chosen: one empty slice": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, nil)},
			want:  Desired{Slices: wantSlices(nil), LeftOut: map[string][]string{}},
		},
		"one cluster": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, clusterNames(1))},
			want:  Desired{Slices: wantSlices(clusterNames(1)), LeftOut: map[string][]string{}},
		},
		"100 clusters: one full slice": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, clusterNames(100))},
			want:  Desired{Slices: wantSlices(clusterNames(100)), LeftOut: map[string][]string{}},
		},
		"101 clusters: a second slice of one": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, clusterNames(101))},
			want:  Desired{Slices: wantSlices(clusterNames(101)), LeftOut: map[string][]string{}},
		},
		"250 clusters: three slices": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, clusterNames(250))},
			want:  Desired{Slices: wantSlices(clusterNames(250)), LeftOut: map[string][]string{}},
		},
		"clusters left out are not referenced, and the rest close up": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, clusterNames(102)),
				LeftOut: map[string]string{"c000": LeftOutUnpublished, "c050": LeftOutNoProfile, "c007": LeftOutUnpublished}},
			want: Desired{Slices: wantSlices(without(clusterNames(102), "c000", "c007", "c050")),
				LeftOut: map[string][]string{LeftOutUnpublished: {"c000", "c007"}, LeftOutNoProfile: {"c050"}}},
		},
		"every cluster left out: one empty slice": {
			world: World{Placement: placement, Published: true, Decisions: ocmDecisions(placement, clusterNames(1)),
				LeftOut: map[string]string{"c000": LeftOutNoProfile}},
			want: Desired{Slices: wantSlices(nil), LeftOut: map[string][]string{LeftOutNoProfile: {"c000"}}},
		},
		"OCM's order: decision groups, then the number of each decision": {
			world: World{Placement: placement, Published: true, Decisions: []clusterv1beta1.PlacementDecision{
				ocmDecision(placement, 10, 1, "c4"), ocmDecision(placement, 2, 0, "c2", "c3"), ocmDecision(placement, 1, 0, "c1"), ocmDecision(placement, 3, 1, "c9")}},
			want: Desired{Slices: wantSlices([]string{"c1", "c2", "c3", "c9", "c4"}), LeftOut: map[string][]string{}},
		},
		"empty decisions (not scheduled) and repeats name no one twice": {
			world: World{Placement: placement, Published: true, Decisions: []clusterv1beta1.PlacementDecision{
				ocmDecision(placement, 1, 0, "c1", "", "c2"), ocmDecision(placement, 2, 0, "c1")}},
			want: Desired{Slices: wantSlices([]string{"c1", "c2"}), LeftOut: map[string][]string{}},
		},
		"the namespace publishes nothing: no slice": {
			world: World{Placement: placement, Decisions: ocmDecisions(placement, clusterNames(3))},
		},
		"the Placement is gone: no slice": {
			world: World{Published: true},
		},
		"a Placement whose name is no label value: no slice": {
			world: World{Placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: string(make([]byte, 64))}}, Published: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.world.ManagerName = testManager
			if diff := cmp.Diff(tc.want, DesiredSlices(tc.world), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DesiredSlices (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDesiredSlicesIgnoreTheOrderTheyAreRead: the slices, their names,
// indexes and keys depend on OCM's decisions, not on the order a List
// returns them in.
func TestDesiredSlicesIgnoreTheOrderTheyAreRead(t *testing.T) {
	placement := testPlacement()
	decisions := ocmDecisions(placement, clusterNames(250))
	want := DesiredSlices(World{Placement: placement, Published: true, Decisions: decisions, ManagerName: testManager})
	for range 10 {
		shuffled := append([]clusterv1beta1.PlacementDecision(nil), decisions...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := DesiredSlices(World{Placement: placement, Published: true, Decisions: shuffled, ManagerName: testManager})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("DesiredSlices of reordered decisions (-first +reordered):\n%s", diff)
		}
	}
}

func without(names []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}
