package clusterprofile

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// FieldManagerPrefix starts the field manager name of every writer in this
// project (clusterprofile-mirror, clusterprofile-access-proxy, ...).
const FieldManagerPrefix = "clusterprofile-"

// KeepOwnManagedFields is a cache transform for ClusterProfiles: it drops the
// managedFields entries of other writers, which this project never reads,
// and keeps its own, which the no-op check needs.
func KeepOwnManagedFields() toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil || obj.GetManagedFields() == nil {
			return in, nil
		}
		var own []metav1.ManagedFieldsEntry
		for _, entry := range obj.GetManagedFields() {
			if strings.HasPrefix(entry.Manager, FieldManagerPrefix) {
				own = append(own, entry)
			}
		}
		obj.SetManagedFields(own)
		return in, nil
	}
}

// TrimManagedFields is the manager's cache transform for every type: it
// keeps this project's own managedFields entries on ClusterProfiles (the
// no-op check reads them) and drops managedFields everywhere else. One
// transform for all types, rather than one per type, because a per-type
// cache option makes the manager resolve the ClusterProfile API at start,
// and it may not be installed yet.
func TrimManagedFields() toolscache.TransformFunc {
	keepOwn, strip := KeepOwnManagedFields(), toolscache.TransformFunc(func(in any) (any, error) {
		if obj, err := meta.Accessor(in); err == nil {
			obj.SetManagedFields(nil)
		}
		return in, nil
	})
	return func(in any) (any, error) {
		if _, ok := in.(*cpv1alpha1.ClusterProfile); ok {
			return keepOwn(in)
		}
		return strip(in)
	}
}
