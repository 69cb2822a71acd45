package chart_test

import (
	"math/bits"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

const chartName = "clusterprofile-manager"

// gates is one combination of the chart's feature gate values.
type gates struct {
	mirror, accessProvider, directAccess, credSyncer, agent, multikueue, argocd, placementDecision bool
}

// allOn is every gate on.
func allOn() gates { return gates{true, true, true, true, true, true, true, true} }

// allGates is every combination of the first five gates, from all off to
// all on; the MultiKueue gate is on in those with an odd number of gates on,
// the Argo CD gate in those whose access providers are both on or both off,
// and the placement decisions gate in those whose mirror and syncer are both
// on or both off, so each other gate is seen on and off with each of them on
// and off, without multiplying the real-control-plane tests that run once
// per combination.
func allGates() []gates {
	var out []gates
	for i := 0; i < 32; i++ {
		out = append(out, gates{mirror: i&1 != 0, accessProvider: i&2 != 0, directAccess: i&4 != 0, credSyncer: i&8 != 0,
			agent: i&16 != 0, multikueue: bits.OnesCount(uint(i))%2 == 1, argocd: (i&2 != 0) == (i&4 != 0),
			placementDecision: (i&1 != 0) == (i&8 != 0)})
	}
	out = append(out, allOn())
	return out
}

// String names the combination for subtests: "mirror+proxy", "none", ...
func (g gates) String() string {
	var on []string
	for _, f := range []struct {
		on   bool
		name string
	}{{g.mirror, "mirror"}, {g.accessProvider, "proxy"}, {g.directAccess, "direct"}, {g.credSyncer, "syncer"}, {g.agent, "agent"},
		{g.multikueue, "multikueue"}, {g.argocd, "argocd"}, {g.placementDecision, "decisions"}} {
		if f.on {
			on = append(on, f.name)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, "+")
}

// values are the chart values for the combination.
func (g gates) values(cleanup bool) map[string]any {
	return map[string]any{
		"featureGates": map[string]any{
			"clusterProfile":                  g.mirror,
			"clusterProfileAccessProvider":    g.accessProvider,
			"clusterProfileDirectAccess":      g.directAccess,
			"clusterProfileCredSyncer":        g.credSyncer,
			"clusterProfileAgent":             g.agent,
			"clusterProfileMultiKueue":        g.multikueue,
			"clusterProfileArgoCD":            g.argocd,
			"clusterProfilePlacementDecision": g.placementDecision,
		},
		"cleanupDisabledFeatures": cleanup,
	}
}

// variant is a gate combination with or without cleanupDisabledFeatures.
type variant struct {
	gates
	cleanup bool
}

func (v variant) String() string {
	if v.cleanup {
		return v.gates.String() + ",cleanup"
	}
	return v.gates.String()
}

func allVariants() []variant {
	var out []variant
	for _, cleanup := range []bool{false, true} {
		for _, g := range allGates() {
			out = append(out, variant{gates: g, cleanup: cleanup})
		}
	}
	return out
}

var (
	loadOnce    sync.Once
	loadedChart *chart.Chart
	loadErr     error
)

// loadChart loads charts/clusterprofile-manager once for the suite.
func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	loadOnce.Do(func() { loadedChart, loadErr = chartrender.Load(chartrender.ChartDir(chartName)) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loadedChart
}

// render renders the chart for a release and returns its objects in install order.
func render(t testing.TB, rel chartrender.Release, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	manifest, err := chartrender.Render(loadChart(t), rel, values)
	if err != nil {
		t.Fatalf("rendering %s with %v: %v", chartName, values, err)
	}
	objects, err := chartrender.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// objectKey names an object in test output: "Kind namespace/name" or "Kind name".
func objectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetKind() + " " + u.GetName()
}

// find returns the rendered object of that kind and name, or nil.
func find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objects {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

// managerContainer returns the manager container of the rendered Deployment.
func managerContainer(t testing.TB, objects []*unstructured.Unstructured) map[string]any {
	t.Helper()
	for _, u := range objects {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if c := c.(map[string]any); c["name"] == "manager" {
				return c
			}
		}
	}
	t.Fatal("the rendered Deployment has no manager container")
	return nil
}

// managerArgs returns the manager container's arguments.
func managerArgs(t testing.TB, objects []*unstructured.Unstructured) []string {
	t.Helper()
	args, _, err := unstructured.NestedStringSlice(managerContainer(t, objects), "args")
	if err != nil {
		t.Fatal(err)
	}
	return args
}
