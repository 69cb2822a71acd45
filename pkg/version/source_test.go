package version_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

const chartName = "clusterprofile-manager"

// readVERSION is the repository's one version source.
func readVERSION(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(v) {
		t.Fatalf("VERSION %q is not a semantic version without a leading v (Helm's chart version and the image tag take it as is)", v)
	}
	return v
}

// TestChartFollowsVERSION: the chart's version and appVersion are VERSION,
// and the manager's image tag follows appVersion unless a value sets it, so
// helm install pulls the image `make image` tags.
func TestChartFollowsVERSION(t *testing.T) {
	want := readVERSION(t)
	c, err := chartrender.Load(chartrender.ChartDir(chartName))
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != want || c.Metadata.AppVersion != want {
		t.Errorf("Chart.yaml has version %q and appVersion %q, want both %q (the VERSION file)", c.Metadata.Version, c.Metadata.AppVersion, want)
	}
	manifest, err := chartrender.Render(c, chartrender.Release{Name: chartName, Namespace: "open-cluster-management"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := chartrender.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	images := 0
	for _, o := range objects {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			image, _ := c.(map[string]any)["image"].(string)
			images++
			if !strings.HasSuffix(image, ":"+want) {
				t.Errorf("Deployment %s runs %s, want the tag %s", o.GetName(), image, want)
			}
		}
	}
	if images == 0 {
		t.Error("the default values render no Deployment container")
	}
}
