package mirror

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// newFakeClient is utiltesting's fake client with the mirror's own index.
func newFakeClient(objs ...client.Object) client.WithWatch {
	return fakeclient.Builder(objs...).
		WithIndex(&clusterv1.ManagedCluster{}, IndexClusterIDCandidate, IndexClusterIDCandidates).Build()
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

func TestClusterID(t *testing.T) {
	claiming := func(name, id string) *utiltesting.ManagedClusterWrapper {
		return utiltesting.MakeManagedCluster(name).Claim(PropertyClaimID, id)
	}
	cases := map[string]struct {
		cluster      *clusterv1.ManagedCluster
		holders      []clusterv1.ManagedCluster
		wantID       string
		wantConflict *IDConflict
	}{
		"no claim: the cluster's name": {
			cluster: utiltesting.MakeManagedCluster("a").Obj(),
			wantID:  "a",
		},
		"a claim only the cluster holds": {
			cluster: claiming("a", "8f1c").Obj(),
			holders: clusters(claiming("a", "8f1c")),
			wantID:  "8f1c",
		},
		"a claim of the cluster's own name": {
			cluster: claiming("a", "a").Obj(),
			holders: clusters(claiming("a", "a")),
			wantID:  "a",
		},
		"a claim another cluster makes too: the name, and the conflict": {
			cluster:      claiming("a", "8f1c").Obj(),
			holders:      clusters(claiming("c", "8f1c"), claiming("a", "8f1c"), claiming("b", "8f1c")),
			wantID:       "a",
			wantConflict: &IDConflict{ID: "8f1c", ClaimedBy: []string{"b", "c"}},
		},
		"a claim of another cluster's name: its name fallback would collide": {
			cluster:      claiming("a", "b").Obj(),
			holders:      clusters(claiming("a", "b"), utiltesting.MakeManagedCluster("b")),
			wantID:       "a",
			wantConflict: &IDConflict{ID: "b", Named: "b"},
		},
		"a claim of another cluster's name, which claims an id of its own: still refused": {
			cluster:      claiming("a", "b").Obj(),
			holders:      clusters(claiming("b", "other")),
			wantID:       "a",
			wantConflict: &IDConflict{ID: "b", Named: "b"},
		},
		"claimed by one and the name of another": {
			cluster:      claiming("a", "b").Obj(),
			holders:      clusters(utiltesting.MakeManagedCluster("b"), claiming("c", "b")),
			wantID:       "a",
			wantConflict: &IDConflict{ID: "b", ClaimedBy: []string{"c"}, Named: "b"},
		},
		"a claim of a cluster being deleted does not count": {
			cluster: claiming("a", "8f1c").Obj(),
			holders: []clusterv1.ManagedCluster{deleting(claiming("c", "8f1c"))},
			wantID:  "8f1c",
		},
		"the name of a cluster being deleted still counts, until it is gone": {
			cluster:      claiming("a", "b").Obj(),
			holders:      []clusterv1.ManagedCluster{deleting(utiltesting.MakeManagedCluster("b"))},
			wantID:       "a",
			wantConflict: &IDConflict{ID: "b", Named: "b"},
		},
		"a listed cluster that no longer holds the id (a stale read) does not count": {
			cluster: claiming("a", "8f1c").Obj(),
			holders: clusters(claiming("c", "other"), utiltesting.MakeManagedCluster("d")),
			wantID:  "8f1c",
		},
		"a claim the schema rejects is no claim; the first valid one counts": {
			cluster: utiltesting.MakeManagedCluster("a").Claim(PropertyClaimID, "").Claim(PropertyClaimID, "8f1c").Obj(),
			holders: clusters(claiming("c", "")),
			wantID:  "8f1c",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			id, conflict := clusterID(tc.cluster, tc.holders)
			if diff := cmp.Diff(tc.wantID, id); diff != "" {
				t.Errorf("id (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConflict, conflict); diff != "" {
				t.Errorf("conflict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIDConflictString(t *testing.T) {
	cases := map[string]struct {
		conflict IDConflict
		want     string
	}{
		"claimed by others": {
			conflict: IDConflict{ID: "8f1c", ClaimedBy: []string{"b", "c"}},
			want: `The id.k8s.io claim "8f1c" is also claimed by ManagedCluster(s) b, c: its ClusterProfiles carry ` +
				`cluster.clusterset.k8s.io="a" (this ManagedCluster's name) and no id.k8s.io property until the id is its alone`,
		},
		"another's name, and claimed": {
			conflict: IDConflict{ID: "b", ClaimedBy: []string{"c"}, Named: "b"},
			want: `The id.k8s.io claim "b" is also claimed by ManagedCluster(s) c and the name of ManagedCluster b: its ClusterProfiles carry ` +
				`cluster.clusterset.k8s.io="a" (this ManagedCluster's name) and no id.k8s.io property until the id is its alone`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.conflict.String("a")); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
		})
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
	), nil, Options{ManagerName: testManager})
	ctx := context.Background()

	cases := map[string]struct {
		obj  client.Object
		want []string
	}{
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(r.clustersSharingID(ctx, tc.obj))); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
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
