package clusterprofile

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
)

// IndexByName indexes ClusterProfiles by name. A cluster's profiles are all
// named after it, so this finds them in every namespace (and any other
// manager's profile that holds the same name). It is the name, never a
// label, that ties a profile to a cluster: labels are whatever the
// profile's creator wrote.
const IndexByName = "metadata.name"

// API is the ClusterProfile kind, which every capability requires.
var API = cpv1alpha1.GroupVersion.WithKind("ClusterProfile")

// NameIndex is IndexByName, for the capabilities that find a cluster's
// profiles; it is registered once, before the first of them starts.
var NameIndex = fieldindex.Index{Name: IndexByName, Setup: SetupIndexes}

// SetupIndexes registers the shared ClusterProfile indexes with the cache.
// A cluster's profiles are looked up across all namespaces only.
func SetupIndexes(ctx context.Context, indexes cache.Cache) error {
	return fieldindex.ClusterWide(ctx, indexes, &cpv1alpha1.ClusterProfile{}, IndexByName, IndexProfileName)
}

// IndexProfileName is the IndexByName function (exported for tests that
// build a fake client with the production indexes).
func IndexProfileName(obj client.Object) []string {
	return []string{obj.GetName()}
}

// Named are the keys of the profiles named name, in every namespace, as
// reader (a cache with IndexByName) holds them.
func Named(ctx context.Context, reader client.Reader, name string) ([]types.NamespacedName, error) {
	list := &cpv1alpha1.ClusterProfileList{}
	if err := reader.List(ctx, list, client.MatchingFields{IndexByName: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ClusterProfiles named %s: %w", name, err)
	}
	keys := make([]types.NamespacedName, 0, len(list.Items))
	for i := range list.Items {
		keys = append(keys, client.ObjectKeyFromObject(&list.Items[i]))
	}
	return keys, nil
}
