package mirror

import (
	"fmt"
	"slices"
	"strings"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// IDConflict is why a cluster's id.k8s.io claim is not its id: other
// ManagedClusters hold the same id, as their own claim or as their name.
// Each claimant then falls back to its ManagedCluster name, which no other
// cluster can publish, so an id stays unique on the hub whatever a
// klusterlet claims.
type IDConflict struct {
	// ID is the claimed id.
	ID string
	// ClaimedBy are the other clusters claiming ID, sorted.
	ClaimedBy []string
	// Named is the cluster named ID, if any.
	Named string
}

// String describes the conflict for an Event: the other clusters and the
// fallback.
func (c IDConflict) String(clusterName string) string {
	var holders []string
	if len(c.ClaimedBy) > 0 {
		holders = append(holders, "claimed by ManagedCluster(s) "+strings.Join(c.ClaimedBy, ", "))
	}
	if c.Named != "" {
		holders = append(holders, "the name of ManagedCluster "+c.Named)
	}
	return fmt.Sprintf("The %s claim %q is also %s: its ClusterProfiles carry %s=%q (this ManagedCluster's name) and no %s property until the id is its alone",
		PropertyClaimID, c.ID, strings.Join(holders, " and "), PropertyClusterID, clusterName, PropertyClaimID)
}

// ClaimedID is the cluster's id.k8s.io claim: the first one with a value the
// ClusterProfile schema accepts (as claimsToProperties takes it), "" when
// there is none. It does not depend on the cluster's other claims, so the
// index (IndexClusterIDCandidates) and the decision (clusterID) agree.
func ClaimedID(cluster *clusterv1.ManagedCluster) string {
	for _, claim := range cluster.Status.ClusterClaims {
		if claim.Name == PropertyClaimID && claim.Value != "" && len(claim.Value) <= maxPropertyValue {
			return claim.Value
		}
	}
	return ""
}

// clusterID decides the cluster's KEP-2149 id from the clusters that may
// hold its claimed id (World.IDHolders): the claim when no other ManagedCluster
// is named so and no other one that is not being deleted claims it too, else
// the cluster's own name and the conflict. A cluster being deleted publishes
// nothing new, and a claim of its was refused or is on profiles on their way
// out; but its name stays on its lingering profiles until it is gone, so it
// holds its name until then.
func clusterID(cluster *clusterv1.ManagedCluster, holders []clusterv1.ManagedCluster) (string, *IDConflict) {
	claimed := ClaimedID(cluster)
	if claimed == "" {
		return cluster.Name, nil
	}
	conflict := IDConflict{ID: claimed}
	for i := range holders {
		other := &holders[i]
		switch {
		case other.Name == cluster.Name:
		case other.Name == claimed:
			conflict.Named = other.Name
		case other.DeletionTimestamp.IsZero() && ClaimedID(other) == claimed:
			conflict.ClaimedBy = append(conflict.ClaimedBy, other.Name)
		}
	}
	if conflict.Named == "" && len(conflict.ClaimedBy) == 0 {
		return claimed, nil
	}
	slices.Sort(conflict.ClaimedBy)
	return cluster.Name, &conflict
}
