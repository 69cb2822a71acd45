package mirror

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// A cluster's KEP-2149 id (the cluster.clusterset.k8s.io property) is its
// id.k8s.io claim, or its ManagedCluster name when it claims none. Ids are
// sticky: an id stays with the cluster that holds it, and a cluster that
// asks for an id another one holds publishes none (its profiles still
// exist) until the holder lets it go. A klusterlet picks its cluster's
// name and claims, so neither a newcomer named like a published id nor a
// claim of one can take it.
//
// Who holds an id comes from what tenants and klusterlets cannot write: a
// cluster's own name is its to hold, unless an id record gives it to
// another cluster; a claimed id is held by the cluster its id record names.
// An id record is a Lease in the manager's own namespace (only hub admins
// and the manager write there), so the holder survives restarts; the
// profiles, which tenants may write and delete, decide nothing.

// IDRecord says which cluster holds a claimed id.
type IDRecord struct {
	ID     string
	Holder string
}

const (
	// LabelIDRecord marks the Leases that are id records.
	LabelIDRecord = "clusterprofile.open-cluster-management.io/cluster-id-record"
	// AnnotationRecordedID is the id an id record's Lease is for (its name
	// is a digest of the id, which may be any string a claim can hold).
	AnnotationRecordedID = "clusterprofile.open-cluster-management.io/cluster-id"
)

// IDRecordName is the name of id's record: one per id, so that creating it
// is taking the id, and the API server settles a race between two clusters.
func IDRecordName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "cluster-id-" + hex.EncodeToString(sum[:16])
}

// idRecordLease is the Lease that records r in namespace.
func idRecordLease(namespace string, r IDRecord) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: IDRecordName(r.ID),
			Labels:      map[string]string{LabelIDRecord: "true"},
			Annotations: map[string]string{AnnotationRecordedID: r.ID}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(r.Holder)},
	}
}

// RecordOf reads an id record's Lease; ok is false for any other Lease.
func RecordOf(l *coordinationv1.Lease) (IDRecord, bool) {
	id, ok := l.Annotations[AnnotationRecordedID]
	if !ok || l.Labels[LabelIDRecord] != "true" || l.Spec.HolderIdentity == nil || l.Name != IDRecordName(id) {
		return IDRecord{}, false
	}
	return IDRecord{ID: id, Holder: *l.Spec.HolderIdentity}, true
}

// IDConflict is why a cluster publishes no id: the id it asks for (its
// claim, or its name) is held by another cluster.
type IDConflict struct {
	// ID is the id the cluster asks for.
	ID string
	// Holder is the ManagedCluster holding it.
	Holder string
	// ByName tells that the holder holds it as its own name (else as its
	// recorded claim).
	ByName bool
}

// String describes the conflict for an Event on the cluster that publishes
// no id.
func (c IDConflict) String() string {
	how := "its recorded id.k8s.io claim"
	if c.ByName {
		how = "its name"
	}
	return fmt.Sprintf("The cluster id %q is held by ManagedCluster %s (%s), which published it first: ids stay with their holder, "+
		"so this cluster's ClusterProfiles carry no %s property (nor %s) until %s releases it (drops the claim, or is deleted)",
		c.ID, c.Holder, how, PropertyClusterID, PropertyClaimID, c.Holder)
}

// ClaimedID is the cluster's id.k8s.io claim: the first one with a value the
// ClusterProfile schema accepts (as claimsToProperties takes it), "" when
// there is none. It does not depend on the cluster's other claims, so the
// index (IndexClusterIDCandidates) and the decision (decideID) agree.
func ClaimedID(cluster *clusterv1.ManagedCluster) string {
	for _, claim := range cluster.Status.ClusterClaims {
		if claim.Name == PropertyClaimID && claim.Value != "" && len(claim.Value) <= maxPropertyValue {
			return claim.Value
		}
	}
	return ""
}

// wantedID is the id a cluster asks for: its claim, else its name.
func wantedID(cluster *clusterv1.ManagedCluster) string {
	if claimed := ClaimedID(cluster); claimed != "" {
		return claimed
	}
	return cluster.Name
}

// IDDecision is the id a cluster publishes and the id records that go
// with it.
type IDDecision struct {
	// ID is published as cluster.clusterset.k8s.io; "" publishes none.
	ID string
	// Conflict says why ID is empty for a cluster that asked for one.
	Conflict *IDConflict
	// Take is the claimed id to record for the cluster before it is
	// published ("" when there is nothing to record).
	Take string
	// Release are the ids whose records the cluster holds and no longer
	// asks for.
	Release []string
}

// decideID decides the id of the cluster named name (cluster is nil when it
// is gone) from the clusters that may hold the id it asks for (named so, or
// claiming it: IndexClusterIDCandidate) and the id records of that id and
// of the cluster's own (records). A cluster being deleted publishes
// nothing new and keeps its records until it is gone, so that no other
// cluster takes its id while its profiles linger.
func decideID(name string, cluster *clusterv1.ManagedCluster, candidates []clusterv1.ManagedCluster, records []IDRecord) IDDecision {
	var decision IDDecision
	if cluster != nil && !cluster.DeletionTimestamp.IsZero() {
		return decision
	}
	if cluster != nil {
		decision = decideWanted(cluster, candidates, records)
	}
	for _, r := range records {
		if r.Holder == name && r.ID != decision.ID {
			decision.Release = append(decision.Release, r.ID)
		}
	}
	slices.Sort(decision.Release)
	return decision
}

// decideWanted decides whether cluster gets the id it asks for: its
// record's holder keeps a recorded id; an unrecorded id is its name's
// cluster's, if that cluster asks for it, and otherwise free to take.
func decideWanted(cluster *clusterv1.ManagedCluster, candidates []clusterv1.ManagedCluster, records []IDRecord) IDDecision {
	want := wantedID(cluster)
	for _, r := range records {
		if r.ID != want {
			continue
		}
		if r.Holder == cluster.Name {
			return IDDecision{ID: want}
		}
		return IDDecision{Conflict: &IDConflict{ID: want, Holder: r.Holder}}
	}
	if want == cluster.Name {
		return IDDecision{ID: want}
	}
	for i := range candidates {
		named := &candidates[i]
		if named.Name == want && wantedID(named) == want {
			return IDDecision{Conflict: &IDConflict{ID: want, Holder: named.Name, ByName: true}}
		}
	}
	return IDDecision{ID: want, Take: want}
}
