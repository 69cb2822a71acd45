// Package monitoring_test tests the operations side against real Prometheus
// programs (Debian's prometheus package: `make prometheus`): the chart's
// alerts with `promtool test rules`, and, end to end, a real Prometheus
// scraping the real manager over its secure endpoint, running every
// dashboard query and alert expression, and firing and resolving the
// write-failure alert on a fault injected on the API server.
package monitoring_test

import (
	"os"
	"os/exec"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

const chartName = "clusterprofile-manager"

// requireBinary returns the path of a Prometheus program. Locally the test
// is skipped without it; in CI (CI set) it fails: CI must run these.
func requireBinary(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, and CI must run this test: run `make prometheus` (Debian's prometheus package)", name)
	}
	t.Skipf("%s is not installed; `make prometheus` installs Debian's prometheus package (promtool and prometheus)", name)
	return ""
}

// render renders the chart for rel with values.
func render(t testing.TB, rel chartrender.Release, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	c, err := chartrender.Load(chartrender.ChartDir(chartName))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := chartrender.Render(c, rel, values)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := chartrender.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// findKind returns the first rendered object of a kind, or nil.
func findKind(objects []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, u := range objects {
		if u.GetKind() == kind {
			return u
		}
	}
	return nil
}

// findName returns the rendered object of a kind and name, or nil.
func findName(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objects {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

// ruleFile renders the chart with the PrometheusRule on (and values) and
// returns its groups as a Prometheus rule file.
func ruleFile(t testing.TB, rel chartrender.Release, values map[string]any) []byte {
	t.Helper()
	if values == nil {
		values = map[string]any{}
	}
	monitoring, _ := values["monitoring"].(map[string]any)
	if monitoring == nil {
		monitoring = map[string]any{}
	}
	rule, _ := monitoring["prometheusRule"].(map[string]any)
	if rule == nil {
		rule = map[string]any{}
	}
	rule["enabled"] = true
	monitoring["prometheusRule"] = rule
	values["monitoring"] = monitoring
	u := findKind(render(t, rel, values), "PrometheusRule")
	if u == nil {
		t.Fatal("the chart rendered no PrometheusRule")
		return nil
	}
	groups, _, err := unstructured.NestedSlice(u.Object, "spec", "groups")
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// alertNames lists the alerts of a rule file.
func alertNames(t testing.TB, rules []byte) []string {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(rules, &file); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
		}
	}
	return names
}
