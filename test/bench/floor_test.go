package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFloorWrites: the floor sends exactly the writes the run's
// capabilities need for a cold start: per profile the mirror's two, one per
// access provider and one per token copy; then one per owned object (a
// MultiKueueCluster and an Argo CD cluster Secret per cluster, a slice per
// 100 clusters a Placement chose, one Placement per namespace).
func TestFloorWrites(t *testing.T) {
	type view struct {
		PerProfile int
		Owned      ownedWrites
		Total      int
		Describe   string
	}
	const clusters, namespaces = 250, 3 // 750 profiles
	cases := map[string]struct {
		gates string
		msas  int
		want  view
	}{
		"the mirror": {gates: "mirror", want: view{PerProfile: 2, Owned: ownedWrites{}, Total: 1500,
			Describe: "mirror metadata + status"}},
		"the access providers and two copies each": {gates: "proxy,direct,credsync", msas: 2, want: view{PerProfile: 6,
			Owned: ownedWrites{}, Total: 4500, Describe: "mirror metadata + status, 2 access provider status, 2 token copy create"}},
		"multikueue": {gates: "multikueue", want: view{PerProfile: 2, Owned: ownedWrites{"multikueue": 250}, Total: 1750,
			Describe: "mirror metadata + status"}},
		"argocd, with the direct entry": {gates: "argocd", want: view{PerProfile: 3, Owned: ownedWrites{"argocd": 250}, Total: 2500,
			Describe: "mirror metadata + status, 1 access provider status"}},
		"placement decisions": {gates: "placementdecision", want: view{PerProfile: 2, Owned: ownedWrites{"placementdecision": 9},
			Total: 1509, Describe: "mirror metadata + status"}},
		"every capability": {gates: "all", msas: 1, want: view{PerProfile: 5,
			Owned: ownedWrites{"multikueue": 250, "argocd": 250, "placementdecision": 9}, Total: 4259,
			Describe: "mirror metadata + status, 2 access provider status, 1 token copy create"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := parseGates(tc.gates)
			if err != nil {
				t.Fatal(err)
			}
			f := newWorld(config{clusters: clusters, namespaces: namespaces, gates: g, msas: tc.msas}).floorWrites()
			got := view{PerProfile: f.perProfile(), Owned: f.owned, Total: f.total(), Describe: f.describe()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("floor writes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOwnedIn: unbinding a namespace deletes its slices, and the
// MultiKueueClusters or Argo CD Secrets when it is Kueue's or Argo CD's
// (only with a single namespace, as they are the last ones).
func TestOwnedIn(t *testing.T) {
	cases := map[string]struct {
		gates      string
		namespaces int
		want       int
	}{
		"the mirror":                           {gates: "mirror", namespaces: 3},
		"every capability":                     {gates: "all", namespaces: 3, want: 3},
		"every capability, a single namespace": {gates: "all", namespaces: 1, want: 250 + 250 + 3},
		"multikueue, two namespaces":           {gates: "multikueue", namespaces: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := parseGates(tc.gates)
			if err != nil {
				t.Fatal(err)
			}
			w := newWorld(config{clusters: 250, namespaces: tc.namespaces, gates: g})
			if got := w.ownedIn(w.namespaces[0]); got != tc.want {
				t.Errorf("owned objects in %s = %d, want %d", w.namespaces[0], got, tc.want)
			}
		})
	}
}
