package mirror

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func TestDesiredStatus(t *testing.T) {
	creation := metav1.NewTime(utiltesting.ConditionTime.Add(-3600e9))
	noReason := utiltesting.MakeManagedCluster("c1").
		Condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionUnknown, "", "lease expired").Obj()
	noReason.CreationTimestamp = creation
	noReason.Status.Conditions[0].LastTransitionTime = metav1.Time{}

	cases := map[string]struct {
		cluster     *clusterv1.ManagedCluster
		wantStatus  Status
		wantSkipped []SkippedClaim
	}{
		"version, claims and both conditions": {
			cluster: utiltesting.MakeManagedCluster("c1").Version("v1.31.2").Claim("region", "eu").
				Available(metav1.ConditionTrue).Joined().Obj(),
			wantStatus: Status{
				Version:    "v1.31.2",
				Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"}},
				Conditions: []metav1.Condition{
					{Type: "ControlPlaneHealthy", Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
						Message: "Managed cluster is available", LastTransitionTime: utiltesting.ConditionTime},
					{Type: "Joined", Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
						Message: "Managed cluster joined", LastTransitionTime: utiltesting.ConditionTime},
				},
			},
		},
		"no source conditions, no profile conditions": {
			cluster:    utiltesting.MakeManagedCluster("c1").Obj(),
			wantStatus: Status{},
		},
		"a reason is never empty and a time never zero": {
			cluster: noReason,
			wantStatus: Status{Conditions: []metav1.Condition{{Type: "ControlPlaneHealthy", Status: metav1.ConditionUnknown,
				Reason: "ManagedClusterAvailable", Message: "lease expired", LastTransitionTime: creation}}},
		},
		"claims the profile schema rejects are skipped; the first duplicate wins": {
			cluster: utiltesting.MakeManagedCluster("c1").
				Claim("ok", "1").
				Claim("", "nameless").
				Claim("valueless", "").
				Claim(strings.Repeat("n", 254), "x").
				Claim("long-value", strings.Repeat("v", 1025)).
				Claim("ok", "2").
				Claim(strings.Repeat("m", 253), strings.Repeat("w", 1024)).Obj(),
			wantStatus: Status{Properties: []cpv1alpha1.Property{
				{Name: "ok", Value: "1"},
				{Name: strings.Repeat("m", 253), Value: strings.Repeat("w", 1024)},
			}},
			wantSkipped: []SkippedClaim{
				{Name: "", Reason: "empty name"},
				{Name: "valueless", Reason: "empty value"},
				{Name: strings.Repeat("n", 254), Reason: "name longer than 253 characters"},
				{Name: "long-value", Reason: "value longer than 1024 characters"},
				{Name: "ok", Reason: "duplicate name, the first claim wins"},
			},
		},
		"claims named like a standard property yield to it": {
			cluster: utiltesting.MakeManagedCluster("c1").
				Claim("cluster.clusterset.k8s.io", "spoofed").
				Claim("clusterset.k8s.io", "other").
				Claim("id.k8s.io", "c1-id").Obj(),
			wantStatus: Status{Properties: []cpv1alpha1.Property{{Name: "id.k8s.io", Value: "c1-id"}}},
			wantSkipped: []SkippedClaim{
				{Name: "cluster.clusterset.k8s.io", Reason: "name of a standard property, which the mirror sets"},
				{Name: "clusterset.k8s.io", Reason: "name of a standard property, which the mirror sets"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, skipped := desiredStatus(tc.cluster, nil)
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkipped, skipped); diff != "" {
				t.Errorf("skipped claims (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredStatusWithAgentReports(t *testing.T) {
	cluster := utiltesting.MakeManagedCluster("c1").
		Condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionTrue, "ManagedClusterAvailable", "Managed cluster is available").Obj()
	agentControlPlane := metav1.Condition{Type: "ControlPlaneHealthy", Status: metav1.ConditionFalse, Reason: "AgentChecksFailed",
		Message: "readyz: etcd failed; kube-scheduler lease stale", LastTransitionTime: utiltesting.ConditionTime}
	agentNodes := metav1.Condition{Type: "AllNodesHealthy", Status: metav1.ConditionTrue, Reason: "AgentNodesHealthy",
		Message: "3/3 nodes Ready", LastTransitionTime: utiltesting.ConditionTime}
	klusterletFallback := metav1.Condition{Type: "ControlPlaneHealthy", Status: metav1.ConditionTrue, Reason: "NoFreshAgentReport",
		Message:            "No fresh report from cluster-profile-agent; the klusterlet reports ManagedClusterAvailable: Managed cluster is available",
		LastTransitionTime: utiltesting.ConditionTime}

	cases := map[string]struct {
		agent *AgentReport
		want  []metav1.Condition
	}{
		"agent off: the klusterlet's condition as it is": {
			agent: nil,
			want: []metav1.Condition{{Type: "ControlPlaneHealthy", Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
				Message: "Managed cluster is available", LastTransitionTime: utiltesting.ConditionTime}},
		},
		"fresh report: the agent's conditions": {
			agent: &AgentReport{Fresh: true, ControlPlane: &agentControlPlane, Nodes: &agentNodes},
			want:  []metav1.Condition{agentControlPlane, agentNodes},
		},
		"stale report: the klusterlet's, saying so, and no node condition": {
			agent: &AgentReport{Fresh: false, ControlPlane: &agentControlPlane, Nodes: &agentNodes},
			want:  []metav1.Condition{klusterletFallback},
		},
		"no report yet": {
			agent: &AgentReport{},
			want:  []metav1.Condition{klusterletFallback},
		},
		"fresh agent without a control plane verdict yet": {
			agent: &AgentReport{Fresh: true, Nodes: &agentNodes},
			want:  []metav1.Condition{klusterletFallback, agentNodes},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, _ := desiredStatus(cluster, tc.agent)
			if diff := cmp.Diff(tc.want, status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusIn checks the standard properties each namespace's profile adds
// to the cluster's status: the cluster's id and the set binding it there.
func TestStatusIn(t *testing.T) {
	bound := World{Publishing: membership.Publishing{
		Sets: []clusterv1beta2.ManagedClusterSet{*utiltesting.MakeClusterSet("dev").Obj(),
			*utiltesting.MakeClusterSet("prod").Selector(metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}).Obj()},
		Bindings: []clusterv1beta2.ManagedClusterSetBinding{*utiltesting.MakeBinding("team-a", "dev").Bound(true).Obj(),
			*utiltesting.MakeBinding("team-b", "prod").Bound(true).Obj()},
		Namespaces: map[string]membership.NamespaceState{"team-a": membership.NamespaceActive, "team-b": membership.NamespaceActive},
	}}
	cases := map[string]struct {
		cluster *clusterv1.ManagedCluster
		want    map[string][]cpv1alpha1.Property
	}{
		"without an id.k8s.io claim the cluster's name is its id": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Claim("region", "eu").Obj(),
			want: map[string][]cpv1alpha1.Property{"team-a": {{Name: "region", Value: "eu"},
				{Name: "cluster.clusterset.k8s.io", Value: "c1"}, {Name: "clusterset.k8s.io", Value: "dev"}}},
		},
		"the id.k8s.io claim is the id": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Claim("id.k8s.io", "8f1c").Obj(),
			want: map[string][]cpv1alpha1.Property{"team-a": {{Name: "id.k8s.io", Value: "8f1c"},
				{Name: "cluster.clusterset.k8s.io", Value: "8f1c"}, {Name: "clusterset.k8s.io", Value: "dev"}}},
		},
		"an id.k8s.io claim the schema rejects is no id": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Claim("id.k8s.io", "").Obj(),
			want: map[string][]cpv1alpha1.Property{"team-a": {
				{Name: "cluster.clusterset.k8s.io", Value: "c1"}, {Name: "clusterset.k8s.io", Value: "dev"}}},
		},
		"each namespace names the set that put the cluster there": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Label("env", "prod").Obj(),
			want: map[string][]cpv1alpha1.Property{
				"team-a": {{Name: "cluster.clusterset.k8s.io", Value: "c1"}, {Name: "clusterset.k8s.io", Value: "dev"}},
				"team-b": {{Name: "cluster.clusterset.k8s.io", Value: "c1"}, {Name: "clusterset.k8s.io", Value: "prod"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			desired := DesiredProfiles(tc.cluster.Name, tc.cluster, bound)
			got := map[string][]cpv1alpha1.Property{}
			for ns := range desired.SetByNamespace {
				got[ns] = desired.StatusIn(ns).Properties
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("properties per namespace (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusInOfGoneCluster(t *testing.T) {
	if got := DesiredProfiles("c1", nil, World{}).StatusIn("team-a"); len(got.Properties) != 0 {
		t.Errorf("a gone cluster's status has properties: %v", got.Properties)
	}
}

func TestProfileLabelsAreValidLabelValues(t *testing.T) {
	long := strings.Repeat("l", 64)
	cases := map[string]struct {
		cluster, set string
		wantLabels   map[string]string
		wantOmitted  []string
	}{
		"names that are label values": {
			cluster: "c1", set: "dev",
			wantLabels: map[string]string{"x-k8s.io/cluster-manager": testManager,
				"open-cluster-management.io/cluster-name": "c1", "multicluster.x-k8s.io/clusterset": "dev"},
		},
		"a cluster name of 64 characters": {
			cluster: long, set: "dev",
			wantLabels:  map[string]string{"x-k8s.io/cluster-manager": testManager, "multicluster.x-k8s.io/clusterset": "dev"},
			wantOmitted: []string{"open-cluster-management.io/cluster-name (the cluster name is no valid label value)"},
		},
		"a set name of 64 characters": {
			cluster: "c1", set: long,
			wantLabels: map[string]string{"x-k8s.io/cluster-manager": testManager, "open-cluster-management.io/cluster-name": "c1"},
			wantOmitted: []string{`multicluster.x-k8s.io/clusterset in namespace ns (set "` + long +
				`" is no valid label value and no other bound set there is)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			meta := profileMeta(types.NamespacedName{Namespace: "ns", Name: tc.cluster}, tc.set, testManager)
			if diff := cmp.Diff(tc.wantLabels, meta.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			got := OmittedLabels(tc.cluster, Desired{SetByNamespace: map[string]string{"ns": tc.set}})
			if diff := cmp.Diff(tc.wantOmitted, got); diff != "" {
				t.Errorf("omitted (-want +got):\n%s", diff)
			}
		})
	}
	if got := OmittedLabels(long, Desired{}); got != nil {
		t.Errorf("an unpublished cluster omits nothing, got %v", got)
	}
}

func TestClaimsPastThePropertiesBudgetAreSkipped(t *testing.T) {
	value := strings.Repeat("v", 1000)
	cluster := utiltesting.MakeManagedCluster("c1")
	for i := range 600 {
		cluster.Claim(fmt.Sprintf("claim-%03d", i), value) // 1,009 bytes each
	}
	cluster.Claim("claim-tiny", "1")
	_, skipped := desiredStatus(cluster.Obj(), nil)
	// 519 claims fit in 512 KiB (519 × 1,009 = 523,671; one more is 524,680);
	// the 81 after them do not; the small one at the end still fits, as a
	// claim is skipped only when it itself would pass the budget.
	var want []SkippedClaim
	for i := 519; i < 600; i++ {
		want = append(want, SkippedClaim{Name: fmt.Sprintf("claim-%03d", i), Reason: "the profile's properties would exceed 524288 bytes"})
	}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
