package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

func TestPlanConditions(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	nowSeconds := metav1.NewTime(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	cond := func(t string, status metav1.ConditionStatus, reason, message string, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: at}
	}
	cp := agentapi.ConditionControlPlaneHealthy
	nodes := agentapi.ConditionAllNodesHealthy
	wantBoth := []metav1.Condition{
		cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", metav1.Time{}),
		cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", metav1.Time{}),
	}
	cases := map[string]struct {
		current     []metav1.Condition
		want        []metav1.Condition
		planned     []metav1.Condition
		wantChanged bool
	}{
		"first report transitions now, at second precision": {
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", nowSeconds),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", nowSeconds),
			},
			wantChanged: true,
		},
		"unchanged keeps the transition times and sends nothing": {
			current: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
		},
		"a new message keeps the transition time": {
			current: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "2/2 nodes Ready", earlier),
			},
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			wantChanged: true,
		},
		"a new reason keeps the transition time": {
			current: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPartiallyObserved, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			wantChanged: true,
		},
		"a new status transitions now": {
			current: []metav1.Condition{
				cond(cp, metav1.ConditionFalse, agentapi.ReasonAgentChecksFailed, "Failing: etcd", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", nowSeconds),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			wantChanged: true,
		},
		"a condition missing on the hub transitions now, in want's order": {
			current: []metav1.Condition{
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", nowSeconds),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			wantChanged: true,
		},
		"conditions of other writers play no part": {
			current: []metav1.Condition{
				cond("Available", metav1.ConditionTrue, "AddonAvailable", "lease fresh", earlier),
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
			want: wantBoth,
			planned: []metav1.Condition{
				cond(cp, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed, "ok", earlier),
				cond(nodes, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "3/3 nodes Ready", earlier),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			planned, changed := PlanConditions(tc.current, tc.want, now)
			if diff := cmp.Diff(tc.planned, planned); diff != "" {
				t.Errorf("planned conditions (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}

func TestOwnConditions(t *testing.T) {
	all := []metav1.Condition{
		{Type: agentapi.ConditionAllNodesHealthy, Status: metav1.ConditionTrue},
		{Type: "Available", Status: metav1.ConditionTrue},
		{Type: "ManifestApplied", Status: metav1.ConditionTrue},
		{Type: agentapi.ConditionControlPlaneHealthy, Status: metav1.ConditionFalse},
	}
	want := []metav1.Condition{
		{Type: agentapi.ConditionControlPlaneHealthy, Status: metav1.ConditionFalse},
		{Type: agentapi.ConditionAllNodesHealthy, Status: metav1.ConditionTrue},
	}
	if diff := cmp.Diff(want, ownConditions(all)); diff != "" {
		t.Errorf("ownConditions (-want +got):\n%s", diff)
	}
}

// The apply body carries the agent's two conditions and nothing else, so its
// field manager owns exactly those list entries.
func TestApplyBodyHoldsOnlyTheAgentConditions(t *testing.T) {
	body := addonStatusApply{APIVersion: "addon.open-cluster-management.io/v1beta1", Kind: "ManagedClusterAddOn"}
	body.Metadata.Name, body.Metadata.Namespace = agentapi.AddonName, "cluster1"
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	body.Status.Conditions = []metav1.Condition{{Type: agentapi.ConditionControlPlaneHealthy, Status: metav1.ConditionTrue,
		Reason: agentapi.ReasonAgentChecksPassed, Message: "ok", LastTransitionTime: at}}
	got, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"addon.open-cluster-management.io/v1beta1","kind":"ManagedClusterAddOn",` +
		`"metadata":{"name":"cluster-profile-agent","namespace":"cluster1"},"status":{"conditions":[` +
		`{"type":"ControlPlaneHealthy","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"AgentChecksPassed","message":"ok"}]}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("apply body (-want +got):\n%s", diff)
	}
}

// PlanConditions works on a copy: what the agent remembers of the hub stays
// as the hub holds it until a write succeeds.
func TestPlanConditionsLeavesCurrentAlone(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	current := []metav1.Condition{{Type: agentapi.ConditionAllNodesHealthy, Status: metav1.ConditionTrue,
		Reason: agentapi.ReasonAgentNodesHealthy, Message: "3/3 nodes Ready", LastTransitionTime: earlier}}
	before := append([]metav1.Condition(nil), current...)
	want := []metav1.Condition{{Type: agentapi.ConditionAllNodesHealthy, Status: metav1.ConditionFalse,
		Reason: agentapi.ReasonAgentNodesUnhealthy, Message: "2/3 nodes Ready"}}
	PlanConditions(current, want, time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	if diff := cmp.Diff(before, current); diff != "" {
		t.Errorf("current after planning (-want +got):\n%s", diff)
	}
}
