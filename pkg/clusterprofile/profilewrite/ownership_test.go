package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestOwnershipOf(t *testing.T) {
	apply := metav1.ManagedFieldsOperationApply
	cases := map[string]struct {
		entries []metav1.ManagedFieldsEntry
		want    Ownership
	}{
		"metadata, spec and every status list, as the API server records them": {
			entries: []metav1.ManagedFieldsEntry{
				entry("me", apply, "", `{"f:metadata":{"f:labels":{"f:a":{},"f:b":{}},"f:annotations":{"f:n":{}}},"f:spec":{"f:displayName":{},"f:clusterManager":{"f:name":{}}}}`),
				entry("me", apply, "status", `{"f:status":{"f:version":{"f:kubernetes":{}},`+
					`"f:conditions":{"k:{\"type\":\"Joined\"}":{".":{},"f:type":{},"f:status":{}}},`+
					`"f:properties":{"k:{\"name\":\"region\"}":{".":{},"f:name":{},"f:value":{}}},`+
					`"f:accessProviders":{"k:{\"name\":\"ocm\"}":{".":{},"f:name":{},"f:cluster":{"f:server":{}}}}}}`),
			},
			want: Ownership{
				Labels: sets.New("a", "b"), Annotations: sets.New("n"), Spec: sets.New("displayName", "clusterManager.name"),
				Version: true, Conditions: sets.New("Joined"), Properties: sets.New("region"), AccessProviders: sets.New("ocm"),
			},
		},
		"other managers and Update operations own nothing for us": {
			entries: []metav1.ManagedFieldsEntry{
				entry("someone", apply, "", `{"f:metadata":{"f:labels":{"f:a":{}}}}`),
				entry("me", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:version":{"f:kubernetes":{}}}}`),
			},
			want: emptyOwnership(),
		},
		"an atomic list is owned whole, with no keys": {
			entries: []metav1.ManagedFieldsEntry{entry("me", apply, "status", `{"f:status":{"f:conditions":{}}}`)},
			want:    emptyOwnership(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{ManagedFields: tc.entries}}
			got, err := OwnershipOf(p, "me")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ownership (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnershipOfRejectsBrokenFields(t *testing.T) {
	p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		entry("me", metav1.ManagedFieldsOperationApply, "", `{"f:metadata":`),
	}}}
	if _, err := OwnershipOf(p, "me"); err == nil {
		t.Fatal("expected an error for unparsable managedFields")
	}
}

func emptyOwnership() Ownership {
	return Ownership{Labels: sets.New[string](), Annotations: sets.New[string](), Spec: sets.New[string](),
		Conditions: sets.New[string](), Properties: sets.New[string](), AccessProviders: sets.New[string]()}
}

// TestCompactEntry: the cache's compact entries give OwnershipOf and
// WrittenBy the same answers as the API server's, in a fraction of the size.
func TestCompactEntry(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	now := metav1.Now()
	asRecorded := func(e metav1.ManagedFieldsEntry) metav1.ManagedFieldsEntry {
		e.APIVersion, e.Time = cpv1alpha1.GroupVersion.String(), &now
		return e
	}
	cases := map[string]struct{ in, want metav1.ManagedFieldsEntry }{
		"the mirror's status": {
			in: asRecorded(entry("clusterprofile-mirror", apply, "status", `{"f:status":{"f:conditions":{`+
				`"k:{\"type\":\"ControlPlaneHealthy\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},`+
				`"k:{\"type\":\"Joined\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},`+
				`"f:properties":{"k:{\"name\":\"id.k8s.io\"}":{".":{},"f:name":{},"f:value":{}}},"f:version":{"f:kubernetes":{}}}}`)),
			want: entry("clusterprofile-mirror", apply, "status", `{"f:status":{"f:conditions":{`+
				`"k:{\"type\":\"ControlPlaneHealthy\"}":{},"k:{\"type\":\"Joined\"}":{}},`+
				`"f:properties":{"k:{\"name\":\"id.k8s.io\"}":{}},"f:version":{"f:kubernetes":{}}}}`),
		},
		"an access provider's entry and condition": {
			in: asRecorded(entry("clusterprofile-access-proxy", apply, "status", `{"f:status":{"f:accessProviders":{`+
				`"k:{\"name\":\"open-cluster-management\"}":{".":{},"f:cluster":{"f:certificate-authority-data":{},"f:extensions":{},"f:server":{}},"f:name":{}}},`+
				`"f:conditions":{"k:{\"type\":\"ClusterProxyAccess\"}":{".":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`)),
			want: entry("clusterprofile-access-proxy", apply, "status", `{"f:status":{`+
				`"f:accessProviders":{"k:{\"name\":\"open-cluster-management\"}":{}},"f:conditions":{"k:{\"type\":\"ClusterProxyAccess\"}":{}}}}`),
		},
		"metadata and spec, already minimal": {
			in: asRecorded(entry("clusterprofile-mirror", apply, "", `{"f:metadata":{"f:annotations":{"f:n":{}},"f:labels":{"f:a":{}}},`+
				`"f:spec":{"f:clusterManager":{"f:name":{}},"f:displayName":{}}}`)),
			want: entry("clusterprofile-mirror", apply, "", `{"f:metadata":{"f:annotations":{"f:n":{}},"f:labels":{"f:a":{}}},`+
				`"f:spec":{"f:clusterManager":{"f:name":{}},"f:displayName":{}}}`),
		},
		"an update keeps who wrote where, not the fields": {
			in:   asRecorded(entry("clusterprofile-mirror", update, "status", `{"f:status":{"f:conditions":{}}}`)),
			want: metav1.ManagedFieldsEntry{Manager: "clusterprofile-mirror", Operation: update, Subresource: "status"},
		},
		"a set that cannot be read is kept whole": {
			in:   asRecorded(entry("clusterprofile-mirror", apply, "status", `{"f:status":`)),
			want: asRecorded(entry("clusterprofile-mirror", apply, "status", `{"f:status":`)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CompactEntry(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("compacted (-want +got):\n%s", diff)
			}
			whole := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{tc.in}}}
			compact := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{got}}}
			wantOwn, wantErr := OwnershipOf(whole, tc.in.Manager)
			gotOwn, gotErr := OwnershipOf(compact, tc.in.Manager)
			if diff := cmp.Diff(wantOwn, gotOwn); diff != "" || (wantErr == nil) != (gotErr == nil) {
				t.Errorf("OwnershipOf differs (-whole +compact):\n%s\nerrors: %v, %v", diff, wantErr, gotErr)
			}
			if fieldmanager.WrittenBy(compact, tc.in.Manager, tc.in.Subresource) != fieldmanager.WrittenBy(whole, tc.in.Manager, tc.in.Subresource) {
				t.Error("WrittenBy differs")
			}
		})
	}
}
