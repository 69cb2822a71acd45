package hubmanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

const expectedBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cpm-secret-writes
spec:
  policyName: cpm-secret-writes
  validationActions: ["Deny"]
`

// TestAdmissionPolicyCheckReportsEachChangeOnce drives the manager's check
// through a life (intact, binding deleted, binding warning only, expected
// file gone, intact again) with a getter standing in for the API server:
// the gauges follow every check, and the log says each new outcome once.
func TestAdmissionPolicyCheckReportsEachChangeOnce(t *testing.T) {
	metrics.Register()
	file := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(file, []byte(expectedBinding), 0o600); err != nil {
		t.Fatal(err)
	}
	var live map[string]any
	c := &admissionPolicyCheck{file: file, get: func(_ context.Context, kind, name string) (map[string]any, error) {
		if live == nil {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "validatingadmissionpolicybindings"}, name)
		}
		return live, nil
	}}
	binding := func(action string) map[string]any {
		return map[string]any{"spec": map[string]any{"policyName": "cpm-secret-writes", "validationActions": []any{action}}}
	}
	var logged []string
	log := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})

	steps := []struct {
		name    string
		prepare func()
		// problems is the gauge; logs what the step logs.
		problems int
		logs     []string
	}{
		{name: "as rendered", prepare: func() { live = binding("Deny") }, problems: 0,
			logs: []string{`"level"=0 "msg"="The release's admission policies and bindings exist as the chart rendered them"`}},
		{name: "checked again, unchanged", problems: 0},
		{name: "binding deleted", prepare: func() { live = nil }, problems: 1,
			logs: []string{`"level"=0 "msg"="The release's admission policies and bindings are not as the chart rendered them: they no longer enforce what the chart promises (helm upgrade restores them)" "problems"=["ValidatingAdmissionPolicyBinding cpm-secret-writes: missing"]`}},
		{name: "still deleted", problems: 1},
		{name: "binding only warns", prepare: func() { live = binding("Warn") }, problems: 1,
			logs: []string{`"level"=0 "msg"="The release's admission policies and bindings are not as the chart rendered them: they no longer enforce what the chart promises (helm upgrade restores them)" "problems"=["ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.validationActions[0] is \"Warn\", want \"Deny\""]`}},
		{name: "expected file gone", prepare: func() { _ = os.Remove(file) }, problems: 1,
			logs: []string{fmt.Sprintf(`"level"=0 "msg"="The release's admission policies and bindings are not as the chart rendered them: they no longer enforce what the chart promises (helm upgrade restores them)" "problems"=["reading the expected admission policies: open %s: no such file or directory"]`, file)}},
		{name: "file back, binding restored", prepare: func() {
			_ = os.WriteFile(file, []byte(expectedBinding), 0o600)
			live = binding("Deny")
		}, problems: 0, logs: []string{`"level"=0 "msg"="The release's admission policies and bindings exist as the chart rendered them"`}},
	}
	for _, step := range steps {
		if step.prepare != nil {
			step.prepare()
		}
		logged = nil
		c.check(context.Background(), log)
		if diff := cmp.Diff(step.logs, logged); diff != "" {
			t.Errorf("%s: logs (-want +got):\n%s", step.name, diff)
		}
		intact := 0
		if step.problems == 0 {
			intact = 1
		}
		want := fmt.Sprintf(`
# HELP clusterprofile_admission_policies_intact 1 while every admission policy and binding the chart rendered for this release exists as rendered, 0 while one is missing, altered or unreadable (checked every minute).
# TYPE clusterprofile_admission_policies_intact gauge
clusterprofile_admission_policies_intact %d
# HELP clusterprofile_admission_policy_problems The chart's admission policies and bindings found missing, altered or unreadable at the last check (1 as well when the expected ones cannot be read).
# TYPE clusterprofile_admission_policy_problems gauge
clusterprofile_admission_policy_problems %d
`, intact, step.problems)
		if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(want),
			"clusterprofile_admission_policies_intact", "clusterprofile_admission_policy_problems"); err != nil {
			t.Errorf("%s: %v", step.name, err)
		}
	}
}

// TestAdmissionPolicyCheckIgnoresACancelledCheck: a check cut short by the
// manager stopping changes neither the gauges nor the log.
func TestAdmissionPolicyCheckIgnoresACancelledCheck(t *testing.T) {
	metrics.Register()
	metrics.SetAdmissionPolicyProblems(0)
	file := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(file, []byte(expectedBinding), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &admissionPolicyCheck{file: file, get: func(ctx context.Context, _, _ string) (map[string]any, error) {
		cancel()
		return nil, ctx.Err()
	}}
	var logged []string
	c.check(ctx, funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{}))
	if len(logged) != 0 {
		t.Errorf("a cancelled check logged %v", logged)
	}
	if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(`
# HELP clusterprofile_admission_policy_problems The chart's admission policies and bindings found missing, altered or unreadable at the last check (1 as well when the expected ones cannot be read).
# TYPE clusterprofile_admission_policy_problems gauge
clusterprofile_admission_policy_problems 0
`), "clusterprofile_admission_policy_problems"); err != nil {
		t.Error(err)
	}
}
