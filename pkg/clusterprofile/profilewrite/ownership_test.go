package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
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
