package chart_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var (
	deploymentInDocs = regexp.MustCompile(`\bdeploy(?:ment)?/([a-z0-9-]+)`)
	serviceJobInDocs = regexp.MustCompile(`job="([a-z0-9-]+)"`)
	chartNameInDocs  = regexp.MustCompile("`(clusterprofile-manager(?:-[a-z0-9-]+)?)`")
)

// TestDocsNameTheObjectsTheChartRenders: every object name the user docs
// give for the documented install (release clusterprofile-manager in
// open-cluster-management), in a command or in code, is an object the chart
// renders there with everything on, so that an on-call command copied from
// the runbooks finds what it names.
func TestDocsNameTheObjectsTheChartRenders(t *testing.T) {
	values := allOn().values(false)
	values["monitoring"] = map[string]any{
		"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true},
		"dashboards": map[string]any{"enabled": true},
	}
	values["metrics"] = map[string]any{"readers": []any{map[string]any{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}}}
	rendered := map[string]map[string]bool{}
	for _, o := range render(t, defaultRelease, values) {
		if rendered[o.GetKind()] == nil {
			rendered[o.GetKind()] = map[string]bool{}
		}
		rendered[o.GetKind()][o.GetName()] = true
	}
	anyKind := func(name string) bool {
		for _, names := range rendered {
			if names[name] {
				return true
			}
		}
		return false
	}

	checked := 0
	for _, doc := range []string{"README.md", "docs/install.md", "docs/operations.md", "docs/consumers.md", "docs/security.md",
		"charts/clusterprofile-manager/README.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range deploymentInDocs.FindAllStringSubmatch(text, -1) {
			checked++
			if !rendered["Deployment"][m[1]] && m[1] != "argocd-server" {
				t.Errorf("%s names Deployment %q, which the chart does not render for the documented install", doc, m[1])
			}
		}
		for _, m := range serviceJobInDocs.FindAllStringSubmatch(text, -1) {
			checked++
			if !rendered["Service"][m[1]] {
				t.Errorf("%s names the scrape job %q, but the chart renders no Service of that name", doc, m[1])
			}
		}
		for _, m := range chartNameInDocs.FindAllStringSubmatch(text, -1) {
			checked++
			if !anyKind(m[1]) {
				t.Errorf("%s names %q, which the chart does not render for the documented install", doc, m[1])
			}
		}
	}
	if checked < 5 {
		t.Errorf("checked %d names: the patterns no longer match the docs", checked)
	}
}
