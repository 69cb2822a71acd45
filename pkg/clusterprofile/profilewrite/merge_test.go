package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

func TestMergeStatus(t *testing.T) {
	prop := func(name, value string) cpv1alpha1.Property { return cpv1alpha1.Property{Name: name, Value: value} }
	cond := func(t, status string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: "R", LastTransitionTime: transition}
	}
	current := cpv1alpha1.ClusterProfileStatus{
		Version:         cpv1alpha1.ClusterVersion{Kubernetes: "v1.30.0"},
		Conditions:      []metav1.Condition{cond("Theirs", "True"), cond("Joined", "False")},
		Properties:      []cpv1alpha1.Property{prop("theirs", "1"), prop("old", "x"), prop("region", "eu")},
		AccessProviders: []cpv1alpha1.AccessProvider{{Name: "theirs", Cluster: clientcmdv1.Cluster{Server: "https://t"}}},
	}
	want := StatusApply{Version: "v1.31.0", Conditions: []metav1.Condition{cond("Joined", "True"), cond("ControlPlaneHealthy", "True")},
		Properties: []cpv1alpha1.Property{prop("region", "us"), prop("zone", "a")}}
	owned := Ownership{Version: true, Conditions: sets.New("Joined", "ControlPlaneHealthy"),
		Properties: sets.New("old", "region", "zone"), AccessProviders: sets.New[string]()}

	got := MergeStatus(current, want, owned)
	wantStatus := cpv1alpha1.ClusterProfileStatus{
		Version: cpv1alpha1.ClusterVersion{Kubernetes: "v1.31.0"},
		// Others keep their place; ours are replaced in place or appended.
		Conditions:      []metav1.Condition{cond("Theirs", "True"), cond("Joined", "True"), cond("ControlPlaneHealthy", "True")},
		Properties:      []cpv1alpha1.Property{prop("theirs", "1"), prop("region", "us"), prop("zone", "a")},
		AccessProviders: current.AccessProviders,
	}
	if diff := cmp.Diff(wantStatus, got); diff != "" {
		t.Errorf("merged status (-want +got):\n%s", diff)
	}
	if current.Properties[1].Name != "old" {
		t.Error("MergeStatus must not modify its input")
	}
}

func TestMergeStatusLeavesVersionAloneWhenNotOwned(t *testing.T) {
	current := cpv1alpha1.ClusterProfileStatus{Version: cpv1alpha1.ClusterVersion{Kubernetes: "v1.30.0"}}
	got := MergeStatus(current, StatusApply{}, emptyOwnership())
	if diff := cmp.Diff(current, got); diff != "" {
		t.Errorf("merged status (-want +got):\n%s", diff)
	}
}
