package clusterprofile

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
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
