package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// On atomic-list CRDs the writer's entries are merged into the current lists
// (others' kept in place), and the mirror records its property names.
func TestPlanOnAtomicLists(t *testing.T) {
	region := cpv1alpha1.Property{Name: "region", Value: "eu"}
	theirs := cpv1alpha1.Property{Name: "theirs", Value: "1"}
	current := &cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1", Annotations: map[string]string{"mirror/properties": `["old"]`}},
		Status: cpv1alpha1.ClusterProfileStatus{
			Conditions:      []metav1.Condition{{Type: "ProxyAccess", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: transition}},
			Properties:      []cpv1alpha1.Property{theirs, {Name: "old", Value: "x"}},
			AccessProviders: []cpv1alpha1.AccessProvider{{Name: "ocm", Cluster: clientcmdv1.Cluster{Server: "https://proxy"}}},
		},
	}
	desire := mirrorDesire("v1.31.0", region)
	got, err := Plan(current, desire, false, mirror)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := *desire.Meta
	wantMeta.Annotations = map[string]string{"mirror/properties": `["region"]`}
	// region is new: recorded, with old, before the status write adds it.
	wantRecord := *desire.Meta
	wantRecord.Annotations = map[string]string{"mirror/properties": `["old","region"]`}
	want := &Write{Current: current, PropertyRecord: &wantRecord, Meta: &wantMeta, Status: &StatusWrite{Apply: desire.Status, Merged: &cpv1alpha1.ClusterProfileStatus{
		Version:         cpv1alpha1.ClusterVersion{Kubernetes: "v1.31.0"},
		Conditions:      []metav1.Condition{current.Status.Conditions[0], joined(metav1.ConditionTrue)},
		Properties:      []cpv1alpha1.Property{theirs, region},
		AccessProviders: current.Status.AccessProviders,
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}

	// The proxy's withdrawal removes its entry and condition by name.
	got, err = Plan(current, Desire{Status: StatusApply{NamespacedName: key}}, false, proxy)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&cpv1alpha1.ClusterProfileStatus{Properties: current.Status.Properties, Conditions: []metav1.Condition{},
		AccessProviders: []cpv1alpha1.AccessProvider{}}, got.Status.Merged); diff != "" {
		t.Errorf("withdrawal (-want +got):\n%s", diff)
	}
}

// A property name already recorded needs no record before the status write;
// nor does a write that only drops names.
func TestPlanOnAtomicListsRecordsOnlyNewNamesFirst(t *testing.T) {
	current := &cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1", Annotations: map[string]string{"mirror/properties": `["region","zone"]`}},
		Status:     cpv1alpha1.ClusterProfileStatus{Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"}, {Name: "zone", Value: "a"}}},
	}
	for name, desire := range map[string]Desire{
		"a value changes": mirrorDesire("", cpv1alpha1.Property{Name: "region", Value: "us"}, cpv1alpha1.Property{Name: "zone", Value: "a"}),
		"a name goes":     mirrorDesire("", cpv1alpha1.Property{Name: "region", Value: "eu"}),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Plan(current, desire, false, mirror)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Status == nil || got.PropertyRecord != nil {
				t.Errorf("want a status write without a property record first, got %+v", got)
			}
		})
	}
}
