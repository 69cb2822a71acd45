package clusterprofile

import (
	"context"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IndexByCluster indexes ClusterProfiles by their cluster-name label. The
// access providers and the credential syncer use it to find a cluster's
// profiles; the manager registers it once for all of them.
const IndexByCluster = "metadata.labels.cluster-name"

// SetupIndexes registers the shared ClusterProfile indexes with the cache.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &cpv1alpha1.ClusterProfile{}, IndexByCluster, func(obj client.Object) []string {
		if cluster := obj.GetLabels()[LabelClusterName]; cluster != "" {
			return []string{cluster}
		}
		return nil
	})
}

// ClusterOf returns the cluster a profile of managerName describes, or ""
// when the profile is not one the hub writers act on: another manager's,
// without the cluster-name label, or being deleted.
func ClusterOf(p *cpv1alpha1.ClusterProfile, managerName string) string {
	if p.Labels[LabelClusterManager] != managerName || !p.DeletionTimestamp.IsZero() {
		return ""
	}
	return p.Labels[LabelClusterName]
}
