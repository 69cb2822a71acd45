// Package fieldindex registers cache field indexes that are only ever
// queried across all namespaces, at half the memory of
// client.FieldIndexer.IndexField.
//
// IndexField files every namespaced object under two keys: one for lookups
// across all namespaces and one for lookups within the object's namespace.
// Each key of an index owns a set, so a key that only one object has (a
// ClusterProfile under "<namespace>/<name>", a token copy under its
// namespace and cluster) costs a set per object: about a kilobyte per
// profile and copy on a hub with tens of thousands of each, for lookups
// this project never makes. ClusterWide files objects under the
// all-namespaces key alone, in the format controller-runtime's cache reader
// looks up, so a List with client.MatchingFields and no namespace finds
// them as before. A List that also names a namespace finds nothing: use
// IndexField for such an index.
package fieldindex

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The index name and key format of controller-runtime's cache reader
// (pkg/cache/internal: FieldIndexName, KeyToNamespacedKey with no
// namespace). test/integration/capability checks that a List still finds
// what is indexed here.
const (
	indexPrefix   = "field:"
	allNamespaces = "__all_namespaces/"
)

// ClusterWide indexes obj's informer in informers by field, for Lists
// across all namespaces only.
func ClusterWide(ctx context.Context, informers cache.Informers, obj client.Object, field string, extract client.IndexerFunc) error {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("getting the informer of %T to index %s: %w", obj, field, err)
	}
	return informer.AddIndexers(toolscache.Indexers{indexPrefix + field: func(raw any) ([]string, error) {
		o, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("indexing %s: %T is not an object", field, raw)
		}
		values := extract(o)
		keys := make([]string, len(values))
		for i, value := range values {
			keys[i] = allNamespaces + value
		}
		return keys, nil
	}})
}

// Index is a field index several users share (the capabilities started by
// pkg/capability's Runner), registered once by whoever starts the first of
// them.
type Index struct {
	// Name tells indexes apart.
	Name  string
	Setup func(ctx context.Context, indexes cache.Cache) error
}
