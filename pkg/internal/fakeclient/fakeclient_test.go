package fakeclient

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// The two writers' shares of one profile's status.
var (
	key = types.NamespacedName{Namespace: "team", Name: "c1"}

	entryA     = cpv1alpha1.AccessProvider{Name: "a", Cluster: clientcmdv1.Cluster{Server: "https://a.example"}}
	entryB     = cpv1alpha1.AccessProvider{Name: "b", Cluster: clientcmdv1.Cluster{Server: "https://b.example"}}
	conditionA = metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "ByA", LastTransitionTime: utiltesting.ConditionTime}
	conditionB = metav1.Condition{Type: "B", Status: metav1.ConditionFalse, Reason: "ByB", LastTransitionTime: utiltesting.ConditionTime}

	shareA = profilewrite.StatusApply{NamespacedName: key, Conditions: []metav1.Condition{conditionA}, AccessProviders: []cpv1alpha1.AccessProvider{entryA}}
	shareB = profilewrite.StatusApply{NamespacedName: key, Conditions: []metav1.Condition{conditionB}, AccessProviders: []cpv1alpha1.AccessProvider{entryB}}
)

// profileWith is the profile the tests start from, with status, at the
// resourceVersion rv.
func profileWith(rv string, status cpv1alpha1.ClusterProfileStatus) *cpv1alpha1.ClusterProfile {
	p := utiltesting.MakeClusterProfile(key.Namespace, key.Name, "open-cluster-management").Obj()
	p.ResourceVersion = rv
	p.Status = status
	return p
}

func applyStatus(t *testing.T, c client.Client, manager string, share profilewrite.StatusApply) {
	t.Helper()
	body, err := share.Body()
	if err != nil {
		t.Fatal(err)
	}
	if err := ssa.ApplyStatus(context.Background(), c, &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
		json.RawMessage(body), manager); err != nil {
		t.Fatalf("status apply of %s: %v", manager, err)
	}
}

func get(t *testing.T, c client.Client) *cpv1alpha1.ClusterProfile {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{}
	if err := c.Get(context.Background(), key, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTwoWritersApplyStatus: two field managers apply their own entry and
// condition to one profile's status. On the chart's CRD (New) the fake
// merges the lists by key, as the API server does, and both writers' entries
// stay; on an atomic-list CRD (NewAtomic) the second apply replaces each list
// whole, which is why the writer does not apply there.
func TestTwoWritersApplyStatus(t *testing.T) {
	cases := map[string]struct {
		newClient func(...client.Object) client.WithWatch
		want      *cpv1alpha1.ClusterProfile
	}{
		"list-maps": {
			newClient: New,
			want: profileWith("1001", cpv1alpha1.ClusterProfileStatus{
				Conditions:      []metav1.Condition{conditionA, conditionB},
				AccessProviders: []cpv1alpha1.AccessProvider{entryA, entryB},
			}),
		},
		"atomic lists": {
			newClient: NewAtomic,
			want: profileWith("1001", cpv1alpha1.ClusterProfileStatus{
				Conditions:      []metav1.Condition{conditionB},
				AccessProviders: []cpv1alpha1.AccessProvider{entryB},
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.newClient(profileWith("", cpv1alpha1.ClusterProfileStatus{}))
			applyStatus(t, c, "writer-a", shareA)
			applyStatus(t, c, "writer-b", shareB)

			if diff := cmp.Diff(tc.want, get(t, c)); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAWriterWithdrawsItsShare: a writer that applies an empty share gives
// up its entries; on list-maps the other writer's stay.
func TestAWriterWithdrawsItsShare(t *testing.T) {
	c := New(profileWith("", cpv1alpha1.ClusterProfileStatus{}))
	applyStatus(t, c, "writer-a", shareA)
	applyStatus(t, c, "writer-b", shareB)
	applyStatus(t, c, "writer-a", profilewrite.StatusApply{NamespacedName: key})

	want := profileWith("1002", cpv1alpha1.ClusterProfileStatus{
		Conditions:      []metav1.Condition{conditionB},
		AccessProviders: []cpv1alpha1.AccessProvider{entryB},
	})
	if diff := cmp.Diff(want, get(t, c)); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
}

// TestMergedWritesOnAtomicLists is what the writer's fallback on atomic
// lists relies on: the whole status, merged from the profile as read, sent
// under optimistic lock, keeps every entry it carries, and a write from a
// read that is no longer current fails with a Conflict (to be retried on a
// fresh read) instead of dropping what was written since.
func TestMergedWritesOnAtomicLists(t *testing.T) {
	ctx := context.Background()
	c := NewAtomic(profileWith("", cpv1alpha1.ClusterProfileStatus{
		Conditions: []metav1.Condition{conditionA}, AccessProviders: []cpv1alpha1.AccessProvider{entryA},
	}))
	read := get(t, c)
	merge := func(from *cpv1alpha1.ClusterProfile, status cpv1alpha1.ClusterProfileStatus) error {
		patched := from.DeepCopy()
		patched.Status = status
		return c.Status().Patch(ctx, patched, client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{}), client.FieldOwner("writer-b"))
	}

	if err := merge(read, cpv1alpha1.ClusterProfileStatus{
		Conditions: []metav1.Condition{conditionA, conditionB}, AccessProviders: []cpv1alpha1.AccessProvider{entryA, entryB},
	}); err != nil {
		t.Fatalf("merged write: %v", err)
	}
	want := profileWith("1000", cpv1alpha1.ClusterProfileStatus{
		Conditions:      []metav1.Condition{conditionA, conditionB},
		AccessProviders: []cpv1alpha1.AccessProvider{entryA, entryB},
	})
	if diff := cmp.Diff(want, get(t, c)); diff != "" {
		t.Errorf("profile after the merged write (-want +got):\n%s", diff)
	}

	if err := merge(read, cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{entryB}}); !apierrors.IsConflict(err) {
		t.Errorf("a merged write from a stale read: %v, want a Conflict", err)
	}
	if diff := cmp.Diff(want, get(t, c)); diff != "" {
		t.Errorf("profile after the stale write (-want +got):\n%s", diff)
	}
}

// TestServedCRDs: each fake serves its CRD, which tells the writer how the
// status lists merge; the atomic one is the chart's less the list-map
// markers of the status lists.
func TestServedCRDs(t *testing.T) {
	atomic := ChartCRD()
	status := atomic.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	for _, name := range []string{"conditions", "properties", "accessProviders", "credentialProviders"} {
		list := status.Properties[name]
		if list.XListType == nil || *list.XListType != "map" {
			t.Fatalf("the chart's status.%s is not a list-map", name)
		}
		list.XListType, list.XListMapKeys = nil, nil
		status.Properties[name] = list
	}
	for name, tc := range map[string]struct {
		newClient func(...client.Object) client.WithWatch
		want      *apiextensionsv1.CustomResourceDefinition
		wantMaps  bool
	}{
		"New":       {newClient: New, want: ChartCRD(), wantMaps: true},
		"NewAtomic": {newClient: NewAtomic, want: atomic},
	} {
		t.Run(name, func(t *testing.T) {
			c := tc.newClient()
			served := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(context.Background(), types.NamespacedName{Name: clusterprofile.CRDName}, served); err != nil {
				t.Fatal(err)
			}
			// As read: typed, without TypeMeta, stored at a resourceVersion.
			want := tc.want.DeepCopy()
			want.TypeMeta, want.ResourceVersion = metav1.TypeMeta{}, "999"
			if diff := cmp.Diff(want, served); diff != "" {
				t.Errorf("served CRD (-want +got):\n%s", diff)
			}
			got, err := (&clusterprofile.SchemaReader{Reader: c}).StatusListsAreMaps(context.Background())
			if err != nil || got != tc.wantMaps {
				t.Errorf("StatusListsAreMaps = %v, %v; want %v", got, err, tc.wantMaps)
			}
		})
	}
}

// TestAStatusApplyIsNotRecordedAsStatus pins a limit of controller-runtime's
// fake client (v0.23), which the package documentation states: its field
// manager records every apply for the main resource (no subresource), and
// a status apply as the whole object, the live metadata and spec with the
// applied status. So a writer's status apply owns, as OwnershipOf reads it,
// none of the entries it applied and every label there was. When this test
// fails, the fake records what the API server does and the caveat can go.
func TestAStatusApplyIsNotRecordedAsStatus(t *testing.T) {
	c := Builder(profileWith("", cpv1alpha1.ClusterProfileStatus{})).WithReturnManagedFields().Build()
	applyStatus(t, c, "writer-a", shareA)
	p := get(t, c)

	var entries []string
	for _, entry := range p.ManagedFields {
		entries = append(entries, fmt.Sprintf("%s %s subresource=%q", entry.Manager, entry.Operation, entry.Subresource))
	}
	if diff := cmp.Diff([]string{`writer-a Apply subresource=""`, `before-first-apply Update subresource=""`}, entries); diff != "" {
		t.Errorf("managedFields (-want +got):\n%s", diff)
	}
	own, err := profilewrite.OwnershipOf(p, "writer-a")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := [][]string{sets.List(own.Labels), sets.List(own.AccessProviders), sets.List(own.Conditions)},
		[][]string{{cpv1alpha1.LabelClusterManagerKey}, {}, {}}; !cmp.Equal(got, want) {
		t.Errorf("the status apply owns labels, entries, conditions %v; want %v", got, want)
	}
}
