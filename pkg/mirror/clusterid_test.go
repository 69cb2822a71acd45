package mirror

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// newFakeClient is the shared fake client (the chart's CRD, list-map status
// lists) with the mirror's own indexes.
func newFakeClient(objs ...client.Object) client.WithWatch {
	return withMirrorIndexes(fakeclient.Builder(objs...))
}

// newAtomicFakeClient is newFakeClient on a CRD with atomic status lists.
func newAtomicFakeClient(objs ...client.Object) client.WithWatch {
	return withMirrorIndexes(fakeclient.AtomicBuilder(objs...))
}

func withMirrorIndexes(b *fake.ClientBuilder) client.WithWatch {
	return b.WithIndex(&clusterv1.ManagedCluster{}, IndexClusterIDCandidate, IndexClusterIDCandidates).
		WithIndex(&coordinationv1.Lease{}, IndexIDRecordHolder, IndexIDRecord).Build()
}

func deleting(w *utiltesting.ManagedClusterWrapper) clusterv1.ManagedCluster {
	now := metav1.Now()
	c := w.Finalizer("test.open-cluster-management.io/hold").Obj()
	c.DeletionTimestamp = &now
	return *c
}

func clusters(ws ...*utiltesting.ManagedClusterWrapper) []clusterv1.ManagedCluster {
	out := make([]clusterv1.ManagedCluster, 0, len(ws))
	for _, w := range ws {
		out = append(out, *w.Obj())
	}
	return out
}

func TestDecideID(t *testing.T) {
	claiming := func(name, id string) *utiltesting.ManagedClusterWrapper {
		return utiltesting.MakeManagedCluster(name).Claim(PropertyClaimID, id)
	}
	cases := map[string]struct {
		name       string // the cluster's, when cluster is nil
		cluster    *clusterv1.ManagedCluster
		candidates []clusterv1.ManagedCluster
		records    []IDRecord
		want       IDDecision
	}{
		"no claim: the cluster's name, unrecorded": {
			cluster: utiltesting.MakeManagedCluster("a").Obj(),
			want:    IDDecision{ID: "a"},
		},
		"a claim nobody holds: taken": {
			cluster:    claiming("a", "8f1c").Obj(),
			candidates: clusters(claiming("a", "8f1c")),
			want:       IDDecision{ID: "8f1c", Take: "8f1c"},
		},
		"a claim the cluster holds: kept": {
			cluster: claiming("a", "8f1c").Obj(),
			records: []IDRecord{{ID: "8f1c", Holder: "a"}},
			want:    IDDecision{ID: "8f1c"},
		},
		"a claim of the cluster's own name: its name, unrecorded": {
			cluster:    claiming("a", "a").Obj(),
			candidates: clusters(claiming("a", "a")),
			want:       IDDecision{ID: "a"},
		},
		"a claim another cluster holds: none, and the conflict": {
			cluster:    claiming("a", "8f1c").Obj(),
			candidates: clusters(claiming("c", "8f1c"), claiming("a", "8f1c")),
			records:    []IDRecord{{ID: "8f1c", Holder: "c"}},
			want:       IDDecision{Conflict: &IDConflict{ID: "8f1c", Holder: "c"}},
		},
		"a claim another cluster makes too, unrecorded: taken (the first to record it holds it)": {
			cluster:    claiming("a", "8f1c").Obj(),
			candidates: clusters(claiming("c", "8f1c"), claiming("a", "8f1c")),
			want:       IDDecision{ID: "8f1c", Take: "8f1c"},
		},
		"a newcomer named like an id another cluster holds: none": {
			cluster: utiltesting.MakeManagedCluster("prod").Obj(),
			records: []IDRecord{{ID: "prod", Holder: "a"}},
			want:    IDDecision{Conflict: &IDConflict{ID: "prod", Holder: "a"}},
		},
		"a claim of another cluster's name, which it publishes: none": {
			cluster:    claiming("a", "b").Obj(),
			candidates: clusters(claiming("a", "b"), utiltesting.MakeManagedCluster("b")),
			want:       IDDecision{Conflict: &IDConflict{ID: "b", Holder: "b", ByName: true}},
		},
		"a claim of another cluster's name, which claims an id of its own: free": {
			cluster:    claiming("a", "b").Obj(),
			candidates: clusters(claiming("b", "other")),
			want:       IDDecision{ID: "b", Take: "b"},
		},
		"the name of a cluster being deleted still counts, until it is gone": {
			cluster:    claiming("a", "b").Obj(),
			candidates: []clusterv1.ManagedCluster{deleting(utiltesting.MakeManagedCluster("b"))},
			want:       IDDecision{Conflict: &IDConflict{ID: "b", Holder: "b", ByName: true}},
		},
		"a claim the schema rejects is no claim; the first valid one counts": {
			cluster:    utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "").Claim(PropertyClaimID, "8f1c").Obj(),
			candidates: clusters(claiming("c", "")),
			want:       IDDecision{ID: "8f1c", Take: "8f1c"},
		},
		"a changed claim releases the old id": {
			cluster: claiming("a", "new").Obj(),
			records: []IDRecord{{ID: "new", Holder: "a"}, {ID: "old", Holder: "a"}},
			want:    IDDecision{ID: "new", Release: []string{"old"}},
		},
		"a dropped claim releases it; the name needs no record": {
			cluster: utiltesting.MakeManagedCluster("a").Obj(),
			records: []IDRecord{{ID: "8f1c", Holder: "a"}},
			want:    IDDecision{ID: "a", Release: []string{"8f1c"}},
		},
		"a refused claim releases what the cluster held": {
			cluster: claiming("a", "8f1c").Obj(),
			records: []IDRecord{{ID: "8f1c", Holder: "c"}, {ID: "old", Holder: "a"}},
			want:    IDDecision{Conflict: &IDConflict{ID: "8f1c", Holder: "c"}, Release: []string{"old"}},
		},
		"a cluster being deleted publishes nothing and keeps its records": {
			cluster: func() *clusterv1.ManagedCluster { c := deleting(claiming("a", "8f1c")); return &c }(),
			records: []IDRecord{{ID: "8f1c", Holder: "a"}},
			want:    IDDecision{},
		},
		"a cluster that is gone releases every id it held": {
			name:    "a",
			records: []IDRecord{{ID: "x", Holder: "a"}, {ID: "8f1c", Holder: "a"}},
			want:    IDDecision{Release: []string{"8f1c", "x"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clusterName := tc.name
			if tc.cluster != nil {
				clusterName = tc.cluster.Name
			}
			if diff := cmp.Diff(tc.want, decideID(clusterName, tc.cluster, tc.candidates, tc.records)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIDConflictString(t *testing.T) {
	cases := map[string]struct {
		conflict IDConflict
		want     string
	}{
		"a recorded claim": {
			conflict: IDConflict{ID: "8f1c", Holder: "b"},
			want: `The cluster id "8f1c" is held by ManagedCluster b (its recorded id.k8s.io claim), which published it first: ` +
				`ids stay with their holder, so this cluster's ClusterProfiles carry no cluster.clusterset.k8s.io property (nor id.k8s.io) ` +
				`until b releases it (drops the claim, or is deleted)`,
		},
		"a name": {
			conflict: IDConflict{ID: "b", Holder: "b", ByName: true},
			want: `The cluster id "b" is held by ManagedCluster b (its name), which published it first: ` +
				`ids stay with their holder, so this cluster's ClusterProfiles carry no cluster.clusterset.k8s.io property (nor id.k8s.io) ` +
				`until b releases it (drops the claim, or is deleted)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.conflict.String()); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIDRecords: a record's Lease is named after its id's digest, and only
// a Lease that is a whole record reads as one.
func TestIDRecords(t *testing.T) {
	record := IDRecord{ID: "prod", Holder: "a"}
	lease := idRecordLease("ocm", record)
	got, ok := RecordOf(lease)
	if !ok || got != record {
		t.Errorf("RecordOf(idRecordLease) = %v, %v; want %v", got, ok, record)
	}
	renamed := lease.DeepCopy()
	renamed.Name = IDRecordName("other")
	unlabelled := lease.DeepCopy()
	unlabelled.Labels = nil
	noHolder := lease.DeepCopy()
	noHolder.Spec.HolderIdentity = nil
	for name, l := range map[string]*coordinationv1.Lease{"named after another id": renamed, "unlabelled": unlabelled, "no holder": noHolder,
		"a leader Lease": {ObjectMeta: metav1.ObjectMeta{Name: "clusterprofile-manager.open-cluster-management.io"}}} {
		if r, ok := RecordOf(l); ok {
			t.Errorf("%s: RecordOf = %v, want none", name, r)
		}
	}
	if diff := cmp.Diff([]string{"a"}, IndexIDRecord(lease)); diff != "" {
		t.Errorf("holder index (-want +got):\n%s", diff)
	}
	if IDRecordName("prod") == IDRecordName("prod2") || len(IDRecordName(strings.Repeat("x", 1024))) > 63 {
		t.Error("record names must differ per id and stay short")
	}
}

func TestClustersOfIDRecordMapToClusters(t *testing.T) {
	r := NewReconciler(newFakeClient(
		utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "prod").Obj(),
		utiltesting.MakeManagedCluster("prod").Obj(),
		utiltesting.MakeManagedCluster("c").Claim(PropertyClaimID, "prod").Obj(),
		utiltesting.MakeManagedCluster("lonely").Obj(),
	), nil, nil, Options{ManagerName: testManager})
	expectMaps(t, r.clustersOfIDRecord, map[string]mapCase{
		"a record → its holder and every cluster that may ask for its id": {
			obj: idRecordLease("ocm", IDRecord{ID: "prod", Holder: "a"}), want: []string{"a", "c", "prod"},
		},
		"a record of a gone holder → it too": {
			obj: idRecordLease("ocm", IDRecord{ID: "x", Holder: "gone"}), want: []string{"gone"},
		},
		"a Lease that is no record → nothing": {
			obj: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "leader"}}, want: []string{},
		},
		"wrong type → nothing": {
			obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}}, want: []string{},
		},
	})
}

// TestAnIDStaysWithItsHolder plays, on the mirror's Reconcile against a
// fake client, a klusterlet that registers a cluster named like the id
// another cluster published: the newcomer publishes no id, the holder keeps
// it across a new Reconciler (a restart: the record is read back), and the
// newcomer takes it once the holder is gone.
func TestAnIDStaysWithItsHolder(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(utiltesting.MakeClusterSet("dev").Obj(), utiltesting.NamespaceObj("team"),
		utiltesting.MakeBinding("team", "dev").Bound(true).Obj(),
		utiltesting.MakeManagedCluster("a").ClusterSet("dev").Claim(PropertyClaimID, "prod").Obj())
	reconcile := func(cluster string) {
		t.Helper()
		r := NewReconciler(c, c, nil, Options{ManagerName: testManager, Namespace: "ocm"})
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: cluster}}); err != nil {
			t.Fatalf("Reconcile %s: %v", cluster, err)
		}
	}
	idOf := func(cluster string) string {
		t.Helper()
		p := &cpv1alpha1.ClusterProfile{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "team", Name: cluster}, p); err != nil {
			t.Fatal(err)
		}
		for _, prop := range p.Status.Properties {
			if prop.Name == PropertyClusterID {
				return prop.Value
			}
		}
		return ""
	}
	reconcile("a")
	if got := idOf("a"); got != "prod" {
		t.Fatalf("a's id = %q, want prod", got)
	}
	if err := c.Create(ctx, utiltesting.MakeManagedCluster("prod").ClusterSet("dev").Obj()); err != nil {
		t.Fatal(err)
	}
	reconcile("prod")
	reconcile("a")
	if got, want := []string{idOf("a"), idOf("prod")}, []string{"prod", ""}; !slices.Equal(got, want) {
		t.Errorf("ids of a and prod = %q, want %q", got, want)
	}
	if err := c.Delete(ctx, utiltesting.MakeManagedCluster("a").Obj()); err != nil {
		t.Fatal(err)
	}
	reconcile("a")
	reconcile("prod")
	if got := idOf("prod"); got != "prod" {
		t.Errorf("once a is gone, prod's id = %q, want prod", got)
	}
}

func TestIndexClusterIDCandidates(t *testing.T) {
	cases := map[string]struct {
		obj  client.Object
		want []string
	}{
		"no claim: its name":          {obj: utiltesting.MakeManagedCluster("a").Obj(), want: []string{"a"}},
		"a claim: its name and claim": {obj: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "8f1c").Obj(), want: []string{"a", "8f1c"}},
		"a claim of its own name":     {obj: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "a").Obj(), want: []string{"a"}},
		"an empty claim":              {obj: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "").Obj(), want: []string{"a"}},
		"wrong type":                  {obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, IndexClusterIDCandidates(tc.obj)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClustersSharingIDMapToClusters(t *testing.T) {
	r := NewReconciler(newFakeClient(
		utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "8f1c").Obj(),
		utiltesting.MakeManagedCluster("b").Claim(PropertyClaimID, "8f1c").Obj(),
		utiltesting.MakeManagedCluster("c").Claim(PropertyClaimID, "d").Obj(),
		utiltesting.MakeManagedCluster("d").Obj(),
		utiltesting.MakeManagedCluster("lonely").Obj(),
	), nil, nil, Options{ManagerName: testManager})
	expectMaps(t, r.clustersSharingID, map[string]mapCase{
		"a claimant → the others claiming its id": {
			obj: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "8f1c").Obj(), want: []string{"b"},
		},
		"a cluster → those claiming its name": {
			obj: utiltesting.MakeManagedCluster("d").Obj(), want: []string{"c"},
		},
		"a claimant of another's name → that cluster": {
			obj: utiltesting.MakeManagedCluster("c").Claim(PropertyClaimID, "d").Obj(), want: []string{"d"},
		},
		"a cluster gone or new, whose old claim others share → them": {
			obj: utiltesting.MakeManagedCluster("e").Claim(PropertyClaimID, "8f1c").Obj(), want: []string{"a", "b"},
		},
		"a cluster nobody's id depends on → nothing": {
			obj: utiltesting.MakeManagedCluster("lonely").Obj(), want: []string{},
		},
		"empty cluster → nothing": {
			obj: &clusterv1.ManagedCluster{}, want: []string{},
		},
		"wrong type → nothing": {
			obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, want: []string{},
		},
	})
}

func TestIDChanged(t *testing.T) {
	now := metav1.Now()
	startsDeleting := utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Obj()
	startsDeleting.DeletionTimestamp = &now
	cases := map[string]struct {
		old, new client.Object
		want     bool
	}{
		"a claim appears": {
			old: utiltesting.MakeManagedCluster("a").Obj(), new: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Obj(), want: true,
		},
		"a claim changes": {
			old:  utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Obj(),
			new:  utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "y").Obj(),
			want: true,
		},
		"a claim goes": {
			old: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Obj(), new: utiltesting.MakeManagedCluster("a").Obj(), want: true,
		},
		"deletion starts": {
			old: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Obj(), new: startsDeleting, want: true,
		},
		"other claims and conditions change": {
			old: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Obj(),
			new: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "x").Claim("region", "eu").Joined().Obj(),
		},
		"wrong type": {
			old: &corev1.Namespace{}, new: &corev1.Namespace{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := idChanged().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("idChanged passes the update: %v, want %v", got, tc.want)
			}
		})
	}
}
