package monitoring_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

var defaultRelease = chartrender.Release{Name: chartName, Namespace: "open-cluster-management"}

// TestAlertRulesWithPromtool renders the chart's alerts with the default
// values, checks them with `promtool check rules`, and runs the unit tests
// of testdata/alerts.test.yaml with `promtool test rules`.
func TestAlertRulesWithPromtool(t *testing.T) {
	promtool := requireBinary(t, "promtool")
	dir := t.TempDir()
	rules := ruleFile(t, defaultRelease, nil)
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// TestEveryAlertHasUnitTests: each alert of the chart has a case where it
// fires and a case where it must not.
func TestEveryAlertHasUnitTests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range file.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	var missing []string
	for _, name := range alertNames(t, ruleFile(t, defaultRelease, nil)) {
		if !fires[name] {
			missing = append(missing, name+": no firing case")
		}
		if !quiet[name] {
			missing = append(missing, name+": no case where it stays quiet")
		}
	}
	sort.Strings(missing)
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("alerts without unit tests (-want +got):\n%s", diff)
	}
}
