package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// Writers as the project names them: the evidence that the status was
// merged before the switch is an Update entry of a "clusterprofile-" writer.
var (
	switchMirror = Identity{FieldManager: "clusterprofile-mirror", ConditionTypes: []string{"Joined"}, Version: true,
		PropertiesAnnotation: "mirror/properties"}
	switchDirect = Identity{FieldManager: "clusterprofile-access-direct", ConditionTypes: []string{"DirectAccess"},
		AccessProviders: []string{"direct"}}
)

// switchedProfile is a profile as the API server holds it just after the
// ClusterProfile CRD switched from atomic status lists to list-maps, in the
// order that lost entries: the mirror and the direct writer merged their
// entries in, then another client merged its own property, condition and
// entry, taking every atomic list over. The direct writer's Update entry,
// left owning nothing, is gone; the mirror's keeps the status itself. The
// cache holds only this project's entries.
func switchedProfile(extra ...metav1.ManagedFieldsEntry) *cpv1alpha1.ClusterProfile {
	fields := append([]metav1.ManagedFieldsEntry{
		entry("clusterprofile-mirror", metav1.ManagedFieldsOperationApply, "",
			`{"f:metadata":{"f:annotations":{"f:mirror/properties":{}},"f:labels":{"f:l":{}}},"f:spec":{"f:displayName":{},"f:clusterManager":{"f:name":{}}}}`),
		entry("clusterprofile-mirror", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`),
	}, extra...)
	return &cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1", Labels: map[string]string{"l": "v"},
			Annotations: map[string]string{"mirror/properties": `["region","zone"]`}, ManagedFields: fields},
		Spec: cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "m"}},
		Status: cpv1alpha1.ClusterProfileStatus{
			Conditions:      []metav1.Condition{joined(metav1.ConditionTrue), directCondition, theirCondition},
			Properties:      []cpv1alpha1.Property{region, zone, costCenter},
			AccessProviders: []cpv1alpha1.AccessProvider{directEntry, theirEntry},
		},
	}
}

var (
	region          = cpv1alpha1.Property{Name: "region", Value: "eu"}
	zone            = cpv1alpha1.Property{Name: "zone", Value: "a"}
	costCenter      = cpv1alpha1.Property{Name: "cost-center", Value: "42"}
	directCondition = metav1.Condition{Type: "DirectAccess", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: transition}
	theirCondition  = metav1.Condition{Type: "ThirdPartyReady", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: transition}
	directEntry     = cpv1alpha1.AccessProvider{Name: "direct", Cluster: clientcmdv1.Cluster{Server: "https://api.c1"}}
	theirEntry      = cpv1alpha1.AccessProvider{Name: "example", Cluster: clientcmdv1.Cluster{Server: "https://example"}}
)

// mirrorOwnsMeta is what the mirror's metadata apply in switchedProfile owns.
func mirrorOwnsMeta() *Ownership {
	own := newOwnership()
	own.Labels, own.Annotations = sets.New("l"), sets.New("mirror/properties")
	own.Spec = sets.New("displayName", "clusterManager.name")
	return &own
}

func TestPlanAfterTheSwitchToListMaps(t *testing.T) {
	unchanged := mirrorDesire("", region, zone)
	zoneAndJoinedGone := mirrorDesire("", region)
	zoneAndJoinedGone.Status.Conditions = nil
	withdraw := Desire{Status: StatusApply{NamespacedName: key}}
	taken := switchedProfile(entry("clusterprofile-mirror", metav1.ManagedFieldsOperationApply, "status",
		`{"f:status":{"f:conditions":{"k:{\"type\":\"Joined\"}":{".":{},"f:type":{}}},"f:properties":{"k:{\"name\":\"region\"}":{".":{},"f:name":{}},"k:{\"name\":\"zone\"}":{".":{},"f:name":{}}}}}`))
	neverAtomic := switchedProfile()
	neverAtomic.ManagedFields = nil
	cases := map[string]planCase{
		// The API server may still merge the lists atomically for a moment:
		// the apply is tried first, so it cannot take the other writer's
		// property and condition with it.
		"the mirror's first write after the switch, nothing changed: an apply tried first as a dry run takes its entries over": {
			current: switchedProfile(), desire: unchanged, writer: switchMirror,
			want: &Write{Current: switchedProfile(), Meta: unchanged.Meta,
				Status: &StatusWrite{Apply: unchanged.Status, DryRunMayDrop: mirrorOwnsMeta()}},
		},
		// Its stale property and condition are owned by no apply: only a
		// removal by key takes them out; the others' entries stay.
		"a claim and a condition gone at the switch: removed by key, then the apply tried first as a dry run": {
			current: switchedProfile(), desire: zoneAndJoinedGone, writer: switchMirror,
			want: &Write{Current: switchedProfile(), Meta: zoneAndJoinedGone.Meta, Status: &StatusWrite{
				Apply: zoneAndJoinedGone.Status, AlsoApply: true, DryRunMayDrop: mirrorOwnsMeta(),
				Merged: &cpv1alpha1.ClusterProfileStatus{
					Conditions:      []metav1.Condition{directCondition, theirCondition},
					Properties:      []cpv1alpha1.Property{region, costCenter},
					AccessProviders: []cpv1alpha1.AccessProvider{directEntry, theirEntry},
				}}},
		},
		"the withdrawn direct entry, its writer's Update entry dropped: removed by key, the others' kept": {
			current: switchedProfile(), desire: withdraw, writer: switchDirect,
			want: &Write{Current: switchedProfile(), Status: &StatusWrite{Apply: withdraw.Status,
				Merged: &cpv1alpha1.ClusterProfileStatus{
					Conditions:      []metav1.Condition{joined(metav1.ConditionTrue), theirCondition},
					Properties:      []cpv1alpha1.Property{region, zone, costCenter},
					AccessProviders: []cpv1alpha1.AccessProvider{theirEntry},
				}}},
		},
		"once the mirror's apply owns its entries, a claim gone is a plain apply": {
			current: taken, desire: mirrorDesire("", region), writer: switchMirror,
			want: &Write{Current: taken, Meta: unchanged.Meta, Status: &StatusWrite{Apply: mirrorDesire("", region).Status}},
		},
		"on a CRD this project never merged, an entry of the direct writer's name is someone else's": {
			current: neverAtomic, desire: withdraw, writer: switchDirect,
		},
	}
	runPlanCases(t, cases)
}

func TestApplyKeepsOthers(t *testing.T) {
	before := cpv1alpha1.ClusterProfileStatus{Conditions: []metav1.Condition{joined(metav1.ConditionTrue), theirCondition},
		Properties: []cpv1alpha1.Property{region, zone, costCenter}}
	ownsZone := newOwnership()
	ownsZone.Properties = sets.New("region", "zone")
	cases := map[string]struct {
		after cpv1alpha1.ClusterProfileStatus
		want  bool
	}{
		"merged as list-maps: only its own entry went": {
			after: cpv1alpha1.ClusterProfileStatus{Conditions: before.Conditions, Properties: []cpv1alpha1.Property{region, costCenter}},
			want:  true,
		},
		"merged atomically: the other writer's property and condition went too": {
			after: cpv1alpha1.ClusterProfileStatus{Conditions: []metav1.Condition{joined(metav1.ConditionTrue)}, Properties: []cpv1alpha1.Property{region}},
			want:  false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ApplyKeepsOthers(before, tc.after, ownsZone); got != tc.want {
				t.Errorf("ApplyKeepsOthers = %v, want %v", got, tc.want)
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
			want: &Write{Current: updated, Status: &StatusWrite{Apply: keep.Status, DryRunMayDrop: ptr.To(newOwnership())}},
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
