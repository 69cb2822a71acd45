package hubmanager

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
)

// lastAppliedAnnotation is kubectl's copy of a whole object, which nothing
// here reads and which can be as large as the object itself.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// cacheOptions keep the informer caches small (a hub holds thousands of
// clusters and tens of thousands of profiles): only the ClusterProfile CRD
// is watched among CRDs, and every object is trimmed of what no capability
// reads (see trimObjects).
func cacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: trimObjects(clusterprofile.NewShared()),
		ByObject: map[client.Object]cache.ByObject{
			&apiextensionsv1.CustomResourceDefinition{}: {
				Field: fields.OneTermEqualSelector("metadata.name", clusterprofile.CRDName),
			},
		},
	}
}

// trimObjects drops, before an object enters the cache: managedFields
// (except this project's own on ClusterProfiles, compacted: the no-op check
// reads them; clusterprofile.Compact), kubectl's last-applied annotation, the capacity and allocatable
// lists of ManagedClusters (the agent reports node facts as claims), and all
// of the ClusterProfile CRD's schema but the status list types (the one
// thing read of it, before every status write: profilewrite.TrimSchema).
func trimObjects(shared *clusterprofile.Shared) toolscache.TransformFunc {
	compact := clusterprofile.CacheTransform(shared)
	return func(in any) (any, error) {
		// Before compact, which shares the annotations with other objects.
		if obj, err := meta.Accessor(in); err == nil {
			if annotations := obj.GetAnnotations(); annotations != nil {
				delete(annotations, lastAppliedAnnotation)
			}
		}
		out, err := compact(in)
		if err != nil {
			return out, err
		}
		switch obj := out.(type) {
		case *clusterv1.ManagedCluster:
			obj.Status.Capacity, obj.Status.Allocatable = nil, nil
			// The direct access entries on the cluster's profiles share it.
			for i := range obj.Spec.ManagedClusterClientConfigs {
				config := &obj.Spec.ManagedClusterClientConfigs[i]
				config.CABundle = shared.Bytes.Intern(config.CABundle)
			}
		case *apiextensionsv1.CustomResourceDefinition:
			profilewrite.TrimSchema(obj)
		}
		return out, nil
	}
}
