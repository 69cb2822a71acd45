package membership

import (
	"context"

	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BindingClusterSetKey indexes ManagedClusterSetBindings by the set they bind.
const BindingClusterSetKey = "spec.clusterSet"

// SetupIndexes registers the indexes the Reader and the Mapper use.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &clusterv1beta2.ManagedClusterSetBinding{}, BindingClusterSetKey, IndexBindingClusterSet)
}

// IndexBindingClusterSet is the BindingClusterSetKey function (exported for
// tests that build a fake client with the production indexes).
func IndexBindingClusterSet(obj client.Object) []string {
	binding, ok := obj.(*clusterv1beta2.ManagedClusterSetBinding)
	if !ok || binding.Spec.ClusterSet == "" {
		return nil
	}
	return []string{binding.Spec.ClusterSet}
}
