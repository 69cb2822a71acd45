package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

var (
	key    = types.NamespacedName{Namespace: "team", Name: "c1"}
	mirror = Identity{FieldManager: "mirror", ConditionTypes: []string{"Joined"}, Version: true, PropertiesAnnotation: "mirror/properties"}
	proxy  = Identity{FieldManager: "proxy", ConditionTypes: []string{"ProxyAccess"}, AccessProviders: []string{"ocm"}}
)

func joined(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: "Joined", Status: status, Reason: "R", LastTransitionTime: transition}
}

func mirrorDesire(version string, properties ...cpv1alpha1.Property) Desire {
	return Desire{
		Meta: &MetaApply{NamespacedName: key, Labels: map[string]string{"l": "v"},
			Spec: &cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "m"}}},
		Status: StatusApply{NamespacedName: key, Version: version, Conditions: []metav1.Condition{joined(metav1.ConditionTrue)},
			Properties: properties},
	}
}

// applied is a profile as the API server stores it after the mirror's
// applies on a list-map CRD: values and the mirror's managedFields.
func applied(version string) *cpv1alpha1.ClusterProfile {
	return &cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1", Labels: map[string]string{"l": "v", "theirs": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				entry("mirror", metav1.ManagedFieldsOperationApply, "",
					`{"f:metadata":{"f:labels":{"f:l":{}}},"f:spec":{"f:displayName":{},"f:clusterManager":{"f:name":{}}}}`),
				entry("mirror", metav1.ManagedFieldsOperationApply, "status",
					`{"f:status":{"f:version":{"f:kubernetes":{}},"f:conditions":{"k:{\"type\":\"Joined\"}":{".":{},"f:type":{}}}}}`),
			}},
		Spec: cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "m"}},
		Status: cpv1alpha1.ClusterProfileStatus{Version: cpv1alpha1.ClusterVersion{Kubernetes: version},
			Conditions: []metav1.Condition{joined(metav1.ConditionTrue)}},
	}
}

func TestPlanOnListMaps(t *testing.T) {
	desire := mirrorDesire("v1.31.0")
	statusApply := func(d Desire) *StatusWrite { return &StatusWrite{Apply: d.Status} }
	cases := map[string]planCase{
		"a missing profile is created with its status": {
			desire: desire, writer: mirror,
			want: &Write{Meta: desire.Meta, Status: statusApply(desire)},
		},
		"an up-to-date profile costs nothing": {current: applied("v1.31.0"), desire: desire, writer: mirror},
		"a changed version is one status write": {
			current: applied("v1.30.0"), desire: desire, writer: mirror,
			want: &Write{Current: applied("v1.30.0"), Status: statusApply(desire)},
		},
		"a changed label is one metadata apply": {
			current: applied("v1.31.0"), writer: mirror,
			desire: func() Desire {
				d := mirrorDesire("v1.31.0")
				d.Meta.Labels = map[string]string{"l": "w"}
				return d
			}(),
			want: &Write{Current: applied("v1.31.0"), Meta: &MetaApply{NamespacedName: key, Labels: map[string]string{"l": "w"},
				Spec: desire.Meta.Spec}},
		},
		"a writer without metadata never creates": {
			desire: Desire{Status: StatusApply{NamespacedName: key, AccessProviders: []cpv1alpha1.AccessProvider{{Name: "ocm"}}}},
			writer: proxy,
		},
		"an empty desire withdraws what the writer owns": {
			current: applied("v1.31.0"), desire: Desire{Status: StatusApply{NamespacedName: key}}, writer: mirror,
			want: &Write{Current: applied("v1.31.0"), Status: &StatusWrite{Apply: StatusApply{NamespacedName: key}}},
		},
		"an empty desire of a writer that owns nothing costs nothing": {
			current: applied("v1.31.0"), desire: Desire{Status: StatusApply{NamespacedName: key}}, writer: proxy,
		},
	}
	runPlanCases(t, cases)
}

// planCase is one row of a table of Plans on a list-map CRD.
type planCase struct {
	current *cpv1alpha1.ClusterProfile
	desire  Desire
	writer  Identity
	want    *Write
}

func runPlanCases(t *testing.T, cases map[string]planCase) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Plan(tc.current, tc.desire, true, tc.writer)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("write (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCarries(t *testing.T) {
	withEntry := &cpv1alpha1.ClusterProfile{Status: cpv1alpha1.ClusterProfileStatus{
		AccessProviders: []cpv1alpha1.AccessProvider{{Name: "ocm"}}}}
	withCondition := &cpv1alpha1.ClusterProfile{Status: cpv1alpha1.ClusterProfileStatus{
		Conditions: []metav1.Condition{{Type: "ProxyAccess"}}}}
	applyByProxy := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		entry("proxy", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{}}`)}}}
	switched := withEntry.DeepCopy()
	switched.ManagedFields = []metav1.ManagedFieldsEntry{
		entry("clusterprofile-mirror", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`)}
	cases := map[string]struct {
		p        *cpv1alpha1.ClusterProfile
		listMaps bool
		want     bool
	}{
		"list-maps: the entry by name where this project merged the status before the switch": {p: switched, listMaps: true, want: true},
		"atomic: the entry by name":                 {p: withEntry, want: true},
		"atomic: the condition by type":             {p: withCondition, want: true},
		"atomic: nothing of its own":                {p: &cpv1alpha1.ClusterProfile{}, want: false},
		"list-maps: its managedFields":              {p: applyByProxy, listMaps: true, want: true},
		"list-maps: an entry of its name by others": {p: withEntry, listMaps: true, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := proxy.Carries(tc.p, tc.listMaps); got != tc.want {
				t.Errorf("Carries = %v, want %v", got, tc.want)
			}
		})
	}
}
