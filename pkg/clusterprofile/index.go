package clusterprofile

import (
	"context"

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
