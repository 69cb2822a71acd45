package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

var (
	key    = types.NamespacedName{Namespace: "team", Name: "c1"}
	mirror = Writer{FieldManager: "mirror", ConditionTypes: []string{"Joined"}, Version: true, PropertiesAnnotation: "mirror/properties"}
	proxy  = Writer{FieldManager: "proxy", ConditionTypes: []string{"ProxyAccess"}, AccessProviders: []string{"ocm"}}
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
	writer  Writer
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
	wantClaim := *desire.Meta
	wantClaim.Annotations = map[string]string{"mirror/properties": `["old","region"]`}
	want := &Write{Current: current, Claim: &wantClaim, Meta: &wantMeta, Status: &StatusWrite{Apply: desire.Status, Merged: &cpv1alpha1.ClusterProfileStatus{
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

// A property name already recorded needs no claim before the status write;
// nor does a write that only drops names.
func TestPlanOnAtomicListsClaimsOnlyNewNames(t *testing.T) {
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
			if got == nil || got.Status == nil || got.Claim != nil {
				t.Errorf("want a status write without a claim, got %+v", got)
			}
		})
	}
}

// On a CRD switched from atomic lists to list-maps, what a writer wrote by
// merge patch before the switch is owned by its Update entry: an apply
// would never remove it, so the writer removes it by key with a merged write.
func TestPlanRemovesWhatWasWrittenBeforeTheSwitchToListMaps(t *testing.T) {
	theirs := cpv1alpha1.AccessProvider{Name: "theirs", Cluster: clientcmdv1.Cluster{Server: "https://theirs"}}
	ocm := cpv1alpha1.AccessProvider{Name: "ocm", Cluster: clientcmdv1.Cluster{Server: "https://ocm"}}
	proxyCondition := metav1.Condition{Type: "ProxyAccess", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: transition}
	profile := func(operation metav1.ManagedFieldsOperationType) *cpv1alpha1.ClusterProfile {
		return &cpv1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1", ManagedFields: []metav1.ManagedFieldsEntry{
				entry("proxy", operation, "status", `{"f:status":{"f:accessProviders":{},"f:conditions":{}}}`),
			}},
			Status: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{theirs, ocm},
				Conditions: []metav1.Condition{proxyCondition}},
		}
	}
	withdraw := Desire{Status: StatusApply{NamespacedName: key}}
	keep := Desire{Status: StatusApply{NamespacedName: key, AccessProviders: []cpv1alpha1.AccessProvider{ocm},
		Conditions: []metav1.Condition{proxyCondition}}}
	updated := profile(metav1.ManagedFieldsOperationUpdate)
	cases := map[string]struct {
		current *cpv1alpha1.ClusterProfile
		desire  Desire
		want    *Write
	}{
		"written by merge patch before the switch, now withdrawn": {
			current: updated, desire: withdraw,
			want: &Write{Current: updated, Status: &StatusWrite{Apply: withdraw.Status,
				Merged: &cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{theirs}, Conditions: []metav1.Condition{}}}},
		},
		"written by merge patch before the switch, still wanted: applied to take ownership, after a dry run": {
			current: updated, desire: keep,
			want: &Write{Current: updated, Status: &StatusWrite{Apply: keep.Status, Guard: ptr.To(newOwnership())}},
		},
		"written by apply, withdrawn: nothing of the writer's is owned, nothing to do": {
			current: profile(metav1.ManagedFieldsOperationApply), desire: withdraw,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Plan(tc.current, tc.desire, true, proxy)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("write (-want +got):\n%s", diff)
			}
		})
	}
}
