package clusterprofile

import (
	"context"
	"fmt"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

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
	// Every status write asks, and a deep copy of the CRD's schema per
	// write is most of the garbage a cold start makes; the schema is only
	// read here.
	err := s.Reader.Get(ctx, types.NamespacedName{Name: CRDName}, crd, client.UnsafeDisableDeepCopy)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading CustomResourceDefinition %s: %w", CRDName, err)
	}
	maps := err == nil && profilewrite.StatusListsAreMaps(crd)
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
