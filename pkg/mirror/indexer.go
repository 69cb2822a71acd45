package mirror

import (
	"context"

	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// ProfileNameKey indexes ClusterProfiles by name. The mirror names each
	// profile after its cluster, so this finds a cluster's profiles in every
	// namespace, and any other manager's profile that holds the same name.
	ProfileNameKey = "metadata.name"
	// BindingClusterSetKey indexes ManagedClusterSetBindings by the set they bind.
	BindingClusterSetKey = "spec.clusterSet"
)

// SetupIndexes registers the mirror's field indexes with the cache.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &cpv1alpha1.ClusterProfile{}, ProfileNameKey, indexProfileName); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &clusterv1beta2.ManagedClusterSetBinding{}, BindingClusterSetKey, indexBindingClusterSet)
}

func indexProfileName(obj client.Object) []string {
	if _, ok := obj.(*cpv1alpha1.ClusterProfile); !ok {
		return nil
	}
	return []string{obj.GetName()}
}

func indexBindingClusterSet(obj client.Object) []string {
	binding, ok := obj.(*clusterv1beta2.ManagedClusterSetBinding)
	if !ok || binding.Spec.ClusterSet == "" {
		return nil
	}
	return []string{binding.Spec.ClusterSet}
}
