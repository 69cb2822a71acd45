package clusterprofile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

func profileAt(ns, uid, rv string) *cpv1alpha1.ClusterProfile {
	return &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{
		Name: "c1", Namespace: ns, UID: types.UID(uid), ResourceVersion: rv}}
}

func versions(profiles []*cpv1alpha1.ClusterProfile) map[string]string {
	out := map[string]string{}
	for _, p := range profiles {
		out[p.Namespace] = string(p.UID) + "@" + p.ResourceVersion
	}
	return out
}

func TestRecentWritesFreshest(t *testing.T) {
	w := NewRecentWrites()
	w.Wrote(profileAt("created", "u1", "10"))  // not in the cache yet
	w.Wrote(profileAt("updated", "u2", "12"))  // cache still at 11
	w.Wrote(profileAt("behind", "u3", "5"))    // cache already at 7
	w.Deleted(profileAt("deleted", "u4", "8")) // cache still has it
	w.Deleted(profileAt("replaced", "u5", "9"))
	cached := []*cpv1alpha1.ClusterProfile{
		profileAt("updated", "u2", "11"),
		profileAt("behind", "u3", "7"),
		profileAt("deleted", "u4", "8"),
		profileAt("replaced", "u6", "20"), // someone created a new one after our delete
		profileAt("untouched", "u7", "3"),
	}
	got := versions(w.Snapshot("c1").Freshest(cached))
	want := map[string]string{
		"created": "u1@10", "updated": "u2@12", "behind": "u3@7", "replaced": "u6@20", "untouched": "u7@3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("freshest (-want +got):\n%s", diff)
	}
	if got := w.Snapshot("other").Freshest(nil); len(got) != 0 {
		t.Errorf("nothing written under another name, got %v", versions(got))
	}
}

func TestRecentWritesRecognisesEchoes(t *testing.T) {
	w := NewRecentWrites()
	w.Wrote(profileAt("a", "u1", "10"))
	w.Wrote(profileAt("a", "u1", "11"))
	if !w.Observed(profileAt("a", "u1", "10")) {
		t.Error("our first write coming back is an echo")
	}
	if !w.Observed(profileAt("a", "u1", "11")) {
		t.Error("our second write coming back is an echo")
	}
	if w.Observed(profileAt("a", "u1", "11")) {
		t.Error("once seen, the write is forgotten; a repeat is news")
	}

	w.Wrote(profileAt("a", "u1", "14"))
	if w.Observed(profileAt("a", "u1", "13")) {
		t.Error("a version between ours is someone else's change")
	}
	if !w.Observed(profileAt("a", "u1", "14")) {
		t.Error("our write after someone else's is still an echo")
	}

	w.Wrote(profileAt("a", "u1", "16"))
	if w.Observed(profileAt("a", "u1", "17")) {
		t.Error("a newer version is someone else's change")
	}
	if got := w.Snapshot("c1").Freshest([]*cpv1alpha1.ClusterProfile{profileAt("a", "u1", "17")}); got[0].ResourceVersion != "17" {
		t.Error("after a newer version the overlay must be gone")
	}

	w.Deleted(profileAt("a", "u1", "17"))
	if !w.ObservedDelete(profileAt("a", "u1", "17")) {
		t.Error("our own deletion coming back is an echo")
	}
	if w.ObservedDelete(profileAt("a", "u1", "17")) {
		t.Error("a deletion we did not make is news")
	}
}

// The informer may deliver our write between the snapshot and the cache read
// of a reconcile; the snapshot must still cover a cache read that is older.
func TestRecentWritesSnapshotSurvivesTheEchoDuringACacheRead(t *testing.T) {
	w := NewRecentWrites()
	w.Wrote(profileAt("a", "u1", "10"))
	w.Wrote(profileAt("a", "u1", "11"))
	snapshot := w.Snapshot("c1")
	w.Observed(profileAt("a", "u1", "10"))
	w.Observed(profileAt("a", "u1", "11"))
	staleRead := []*cpv1alpha1.ClusterProfile{profileAt("a", "u1", "10")}
	if got := versions(snapshot.Freshest(staleRead)); got["a"] != "u1@11" {
		t.Errorf("freshest = %v, want our write u1@11", got)
	}
}
