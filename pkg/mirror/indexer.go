package mirror

import (
	"context"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
)

// IndexClusterIDCandidate indexes ManagedClusters by each id they could
// hold: their name and their id.k8s.io claim (ClaimedID). Looking up a
// claimed id finds every cluster it could collide with.
const IndexClusterIDCandidate = "clusterIDCandidate"

// IDIndex is IndexClusterIDCandidate, registered once before the mirror starts.
var IDIndex = fieldindex.Index{Name: IndexClusterIDCandidate, Setup: SetupIndexes}

// SetupIndexes registers the mirror's own indexes. ManagedClusters are
// cluster-scoped, looked up across all namespaces only.
func SetupIndexes(ctx context.Context, indexes cache.Cache) error {
	return fieldindex.ClusterWide(ctx, indexes, &clusterv1.ManagedCluster{}, IndexClusterIDCandidate, IndexClusterIDCandidates)
}

// IndexClusterIDCandidates is the IndexClusterIDCandidate function
// (exported for tests that build a fake client with the production indexes).
func IndexClusterIDCandidates(obj client.Object) []string {
	cluster, ok := obj.(*clusterv1.ManagedCluster)
	if !ok {
		return nil
	}
	if claimed := ClaimedID(cluster); claimed != "" && claimed != cluster.Name {
		return []string{cluster.Name, claimed}
	}
	return []string{cluster.Name}
}
