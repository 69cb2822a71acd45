package clusterprofile

import (
	"context"
	"fmt"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// statusLists are the status fields several writers share.
var statusLists = []string{"conditions", "properties", "accessProviders"}

// StatusListsAreMaps tells whether the CRD declares every shared status list
// of the served version as a list-map. Copies older than cluster-inventory-api
// v0.1.2 (such as the one OCM's operator installs) do not, and there a
// Server-Side Apply of a list replaces it whole.
func StatusListsAreMaps(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, version := range crd.Spec.Versions {
		if version.Name != cpv1alpha1.GroupVersion.Version {
			continue
		}
		if version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
			return false
		}
		status, ok := version.Schema.OpenAPIV3Schema.Properties["status"]
		if !ok {
			return false
		}
		for _, name := range statusLists {
			list, ok := status.Properties[name]
			if ok && (list.XListType == nil || *list.XListType != "map") {
				return false
			}
		}
		return true
	}
	return false
}

// SchemaReader answers, from the informer cache, how the installed
// ClusterProfile CRD merges status lists, and logs when that changes.
type SchemaReader struct {
	Reader client.Reader
	// last is 0 before the first answer, 1 for list-maps, 2 for atomic lists.
	last atomic.Int32
}

// StatusListsAreMaps reads the installed CRD. When it cannot be read the
// answer is false: the merge write is safe on either kind of CRD.
func (s *SchemaReader) StatusListsAreMaps(ctx context.Context) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := s.Reader.Get(ctx, types.NamespacedName{Name: CRDName}, crd)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading CustomResourceDefinition %s: %w", CRDName, err)
	}
	maps := err == nil && StatusListsAreMaps(crd)
	state := int32(2)
	if maps {
		state = 1
	}
	metrics.SetAtomicStatusLists(!maps)
	previous := s.last.Swap(state)
	switch {
	case previous == state:
	case maps:
		ctrl.LoggerFrom(ctx).Info("ClusterProfile CRD has list-map status lists; writing status with Server-Side Apply", "crd", CRDName)
	default:
		ctrl.LoggerFrom(ctx).Info("ClusterProfile CRD has atomic status lists (installed from a copy older than cluster-inventory-api v0.1.2); "+
			"writing merged status lists under optimistic locking so other writers' entries are kept. Upgrade the CRD to use Server-Side Apply.",
			"crd", CRDName)
	}
	return maps, nil
}
