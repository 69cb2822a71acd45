package docs_test

import (
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
)

// addOnChart is an add-on's chart as OCM's guide installs it: the release,
// the Go module that ships the chart (at the version the suites run, which
// hack/ocmlocal.sh's versionVariable names), the chart's directory in it,
// its manager Deployment, the values the guide sets, and the manager flag
// that turns its ClusterProfile writer on.
type addOnChart struct {
	release, module, versionVariable, dir, deployment string
	guideValues                                       []string
	gate                                              string
}

var addOnCharts = map[string]addOnChart{
	"ocm/cluster-proxy": {
		release: "cluster-proxy", module: "open-cluster-management.io/cluster-proxy", versionVariable: "CLUSTER_PROXY_VERSION",
		dir:        "charts/cluster-proxy",
		deployment: "cluster-proxy-addon-manager",
		guideValues: []string{"userServer.enabled=true", "enableServiceProxy=true",
			"featureGates.clusterProfileAccessProvider=true"},
		gate: "ClusterProfileAccessProvider",
	},
	"ocm/managed-serviceaccount": {
		release: "managed-serviceaccount", module: "open-cluster-management.io/managed-serviceaccount", versionVariable: "MSA_VERSION",
		dir: "charts/managed-serviceaccount", deployment: "managed-serviceaccount-addon-manager",
		guideValues: []string{"featureGates.clusterProfileCredSyncer=true"},
		gate:        "ClusterProfileCredSyncer",
	},
}

// helmUpgrade is `helm upgrade <release> <chart> -n <namespace>
// --reuse-values --set <values>` as the docs write it.
var helmUpgrade = regexp.MustCompile(`^helm upgrade (\S+) (\S+) -n (\S+) --reuse-values((?: --set \S+)+)$`)

// TestTheAddOnsHelmUpgradesTurnTheirWritersOff: install.md's commands that
// turn cluster-proxy's and managed-serviceaccount's ClusterProfile writers
// off (moving from OCM's guide) do so in those add-ons' own charts, at the
// versions the suites run: over the values OCM's guide installs with (which
// turn each writer on), the typed --set turns the manager's gate off, and
// the same command with true (the way back) on again. The local OCM runs
// the add-ons' managers without Helm, so these commands are checked here
// against the charts rather than typed.
func TestTheAddOnsHelmUpgradesTurnTheirWritersOff(t *testing.T) {
	root := repoRoot(t)
	block, err := docsrun.Find(root, docsrun.AddOnGatesOff)
	if err != nil {
		t.Fatal(err)
	}
	ocmlocalScript := readRepoFile(t, root, "hack/ocmlocal.sh")
	upgraded := map[string]bool{}
	for _, command := range block.Commands() {
		m := helmUpgrade.FindStringSubmatch(command)
		if m == nil {
			t.Fatalf("install.md: %q is not `helm upgrade <release> <chart> -n <namespace> --reuse-values --set ...`", command)
		}
		release, chartRef, namespace, sets := m[1], m[2], m[3], strings.Fields(strings.ReplaceAll(m[4], "--set ", ""))
		addOn, ok := addOnCharts[chartRef]
		if !ok || release != addOn.release || namespace != "open-cluster-management-addon" {
			t.Fatalf("install.md: %q upgrades no release OCM's guide installs", command)
		}
		upgraded[chartRef] = true
		addOnChart := loadAddOnChart(t, root, addOn, ocmlocalScript)
		render := func(values ...string) string {
			return managerGates(t, addOnChart, addOn, namespace, append(addOn.guideValues, values...))
		}
		on, off := addOn.gate+"=true", addOn.gate+"=false"
		if got := render(); !strings.Contains(got, on) {
			t.Fatalf("%s with OCM's guide's values: manager gates %q, want %s", chartRef, got, on)
		}
		if got := render(sets...); !strings.Contains(got, off) {
			t.Errorf("%s after install.md's %q: manager gates %q, want %s", chartRef, command, got, off)
		}
		back := strings.Fields(strings.ReplaceAll(strings.Join(sets, " "), "=false", "=true"))
		if got := render(back...); !strings.Contains(got, on) {
			t.Errorf("%s with the values set back to true: manager gates %q, want %s", chartRef, got, on)
		}
	}
	for chartRef := range addOnCharts {
		if !upgraded[chartRef] {
			t.Errorf("install.md's block upgrades no %s release", chartRef)
		}
	}
}

// loadAddOnChart loads the add-on's chart from its Go module, which must be
// the version the local OCM runs (hack/ocmlocal.sh).
func loadAddOnChart(t *testing.T, root string, addOn addOnChart, ocmlocalScript string) *chart.Chart {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", addOn.module).Output()
	if err != nil {
		t.Fatalf("locating %s: %v", addOn.module, err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if tested := shellDefault(t, ocmlocalScript, addOn.versionVariable); version != tested {
		t.Fatalf("go.mod has %s %s, the local OCM runs %s", addOn.module, version, tested)
	}
	c, err := chartrender.Load(filepath.Join(dir, addOn.dir))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// managerGates renders the chart as `helm upgrade --set` with each of
// values does and returns its manager's --feature-gates flags.
func managerGates(t *testing.T, c *chart.Chart, addOn addOnChart, namespace string, values []string) string {
	t.Helper()
	merged := map[string]any{}
	for _, v := range values {
		if err := strvals.ParseInto(v, merged); err != nil {
			t.Fatalf("--set %s: %v", v, err)
		}
	}
	manifest, err := chartrender.Render(c, chartrender.Release{Name: addOn.release, Namespace: namespace}, maps.Clone(merged))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := chartrender.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objects {
		if u.GetKind() != "Deployment" || u.GetName() != addOn.deployment {
			continue
		}
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
			t.Fatal(err)
		}
		var gates []string
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, arg := range c.Args {
				if strings.HasPrefix(arg, "--feature-gates=") {
					gates = append(gates, arg)
				}
			}
		}
		return strings.Join(gates, " ")
	}
	t.Fatalf("%s renders no Deployment %s", addOn.module, addOn.deployment)
	return ""
}
