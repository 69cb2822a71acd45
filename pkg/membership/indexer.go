package membership

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
)

// BindingClusterSetKey indexes ManagedClusterSetBindings by the set they bind.
const BindingClusterSetKey = "spec.clusterSet"

// APIs are what membership is decided from; every capability that uses it
// requires them (namespaces are always served).
var APIs = []schema.GroupVersionKind{
	schema.GroupVersion(clusterv1.GroupVersion).WithKind("ManagedCluster"),
	schema.GroupVersion(clusterv1beta2.GroupVersion).WithKind("ManagedClusterSet"),
	schema.GroupVersion(clusterv1beta2.GroupVersion).WithKind("ManagedClusterSetBinding"),
}

// Index registers the indexes the Reader and the Mapper use, once, before
// the first capability that uses membership starts.
var Index = fieldindex.Index{Name: BindingClusterSetKey, Setup: SetupIndexes}

// SetupIndexes registers the indexes the Reader and the Mapper use.
// Bindings are looked up by set across all namespaces only.
func SetupIndexes(ctx context.Context, indexes cache.Cache) error {
	return fieldindex.ClusterWide(ctx, indexes, &clusterv1beta2.ManagedClusterSetBinding{}, BindingClusterSetKey, IndexBindingClusterSet)
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
