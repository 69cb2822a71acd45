package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseGates: -gates names the capabilities a run turns on (the mirror
// always), "all" every one; the Argo CD integration brings the direct entry
// along when the proxy does not run, for the entry its Secrets use.
func TestParseGates(t *testing.T) {
	cases := map[string]struct {
		value        string
		want         string
		featureGates string
		argoCDEntry  string
		err          string
	}{
		"the mirror alone": {value: "mirror", want: "mirror", featureGates: "ClusterProfile=true"},
		"every capability": {value: "all", want: "mirror+proxy+direct+credsync+agent+multikueue+argocd+placementdecision",
			featureGates: "ClusterProfile=true,ClusterProfileAccessProvider=true,ClusterProfileDirectAccess=true," +
				"ClusterProfileCredSyncer=true,ClusterProfileAgent=true,ClusterProfileMultiKueue=true,ClusterProfileArgoCD=true," +
				"ClusterProfilePlacementDecision=true",
			argoCDEntry: "open-cluster-management"},
		"multikueue": {value: "multikueue", want: "mirror+multikueue", featureGates: "ClusterProfile=true,ClusterProfileMultiKueue=true"},
		"placement decisions, spaced": {value: " placementdecision , ", want: "mirror+placementdecision",
			featureGates: "ClusterProfile=true,ClusterProfilePlacementDecision=true"},
		"argocd brings the direct entry": {value: "argocd", want: "mirror+direct+argocd",
			featureGates: "ClusterProfile=true,ClusterProfileDirectAccess=true,ClusterProfileArgoCD=true",
			argoCDEntry:  "open-cluster-management-direct"},
		"argocd through cluster-proxy": {value: "argocd,proxy", want: "mirror+proxy+argocd",
			featureGates: "ClusterProfile=true,ClusterProfileAccessProvider=true,ClusterProfileArgoCD=true",
			argoCDEntry:  "open-cluster-management"},
		"an unknown gate": {value: "mirror,kueue",
			err: `unknown gate "kueue" (known: all, mirror, proxy, direct, credsync, agent, multikueue, argocd, placementdecision)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := parseGates(tc.value)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("parseGates(%q) = %v, want error %q", tc.value, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseGates(%q): %v", tc.value, err)
			}
			got := struct{ Gates, FeatureGates, ArgoCDEntry string }{g.String(), g.featureGates(), ""}
			if g["argocd"] {
				got.ArgoCDEntry = g.argoCDEntryName()
			}
			want := struct{ Gates, FeatureGates, ArgoCDEntry string }{tc.want, tc.featureGates, tc.argoCDEntry}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("parseGates(%q) (-want +got):\n%s", tc.value, diff)
			}
		})
	}
}

// TestManagerFlags: the manager is told where Kueue and Argo CD are, and
// which entry Argo CD's Secrets use, only when their gates are on; they
// are the last bench namespaces, the first (which the deletion phase
// unbinds) only when there is no other.
func TestManagerFlags(t *testing.T) {
	cases := map[string]struct {
		gates      string
		namespaces int
		want       []string
	}{
		"neither": {gates: "proxy,direct,credsync,agent,placementdecision", namespaces: 4},
		"every capability": {gates: "all", namespaces: 4, want: []string{"--multikueue-namespace=bench-003",
			"--argocd-namespace=bench-002", "--argocd-access-provider=open-cluster-management"}},
		"argocd through the direct entry": {gates: "argocd", namespaces: 4,
			want: []string{"--argocd-namespace=bench-002", "--argocd-access-provider=open-cluster-management-direct"}},
		"two namespaces": {gates: "multikueue,argocd", namespaces: 2, want: []string{"--multikueue-namespace=bench-001",
			"--argocd-namespace=bench-001", "--argocd-access-provider=open-cluster-management-direct"}},
		"one namespace": {gates: "multikueue", namespaces: 1, want: []string{"--multikueue-namespace=bench-000"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := parseGates(tc.gates)
			if err != nil {
				t.Fatal(err)
			}
			w := newWorld(config{clusters: 3, namespaces: tc.namespaces, gates: g})
			if diff := cmp.Diff(tc.want, w.managerFlags()); diff != "" {
				t.Errorf("manager flags (-want +got):\n%s", diff)
			}
		})
	}
}
