package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

// TestOCMDecisionsAndSlices: the bench writes a Placement's decisions as
// OCM's placement controller does, 100 clusters to a PlacementDecision,
// and what the placement decisions make of them (their own function) is a
// slice per PlacementDecision referencing the same clusters' profiles in
// the Placement's namespace.
func TestOCMDecisionsAndSlices(t *testing.T) {
	type decision struct {
		Name, Placement, Group string
		Controller             bool
		First, Last            string
		Clusters               int
	}
	cases := map[string]struct {
		clusters int
		want     []decision
	}{
		"250 clusters": {clusters: 250, want: []decision{
			{Name: "bench-all-decision-1", Placement: "bench-all", Group: "0", Controller: true, First: "c-000", Last: "c-099", Clusters: 100},
			{Name: "bench-all-decision-2", Placement: "bench-all", Group: "0", Controller: true, First: "c-100", Last: "c-199", Clusters: 100},
			{Name: "bench-all-decision-3", Placement: "bench-all", Group: "0", Controller: true, First: "c-200", Last: "c-249", Clusters: 50},
		}},
		"100 clusters": {clusters: 100, want: []decision{
			{Name: "bench-all-decision-1", Placement: "bench-all", Group: "0", Controller: true, First: "c-000", Last: "c-099", Clusters: 100},
		}},
		"no cluster": {clusters: 0, want: []decision{
			{Name: "bench-all-decision-1", Placement: "bench-all", Group: "0", Controller: true},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clusters := make([]string, tc.clusters)
			for i := range clusters {
				clusters[i] = fmt.Sprintf("c-%03d", i)
			}
			p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: placementName, UID: "p-uid"}}
			var got []decision
			var ocm []clusterv1beta1.PlacementDecision
			for _, d := range ocmDecisions(p, clusters) {
				view := decision{Name: d.Name, Placement: d.Labels[clusterv1beta1.PlacementLabel],
					Group: d.Labels[clusterv1beta1.DecisionGroupIndexLabel], Controller: metav1.IsControlledBy(d, p),
					Clusters: len(d.Status.Decisions)}
				if n := len(d.Status.Decisions); n > 0 {
					view.First, view.Last = d.Status.Decisions[0].ClusterName, d.Status.Decisions[n-1].ClusterName
				}
				got = append(got, view)
				ocm = append(ocm, *d)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("OCM's decisions (-want +got):\n%s", diff)
			}

			o := newOwnedWorld(gates{"placementdecision": true}, tc.clusters, 1)
			slices := o.slices(p, ocm)
			if len(slices) != o.slicesPerPlacement || o.objects("placementdecision", tc.clusters, 1) != len(slices) {
				t.Fatalf("%d slices, want %d", len(slices), o.slicesPerPlacement)
			}
			for i, s := range slices {
				var refs []string
				for _, d := range s.Decisions {
					if d.ClusterProfileRef.Namespace != "team" {
						t.Errorf("slice %s references a profile in %s", s.Name, d.ClusterProfileRef.Namespace)
					}
					refs = append(refs, d.ClusterProfileRef.Name)
				}
				var chosen []string
				for _, d := range ocm[i].Status.Decisions {
					chosen = append(chosen, d.ClusterName)
				}
				if diff := cmp.Diff(chosen, refs); diff != "" {
					t.Errorf("slice %s references (-OCM's decisions +got):\n%s", s.Name, diff)
				}
			}
		})
	}
}
