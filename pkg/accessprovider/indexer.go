package accessprovider

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// profileMapper maps the sources' events to the profiles they can change.
// Reconciling a profile the hub does not publish only removes the source's
// entry if it is there, so mapping to every profile is safe.
type profileMapper struct {
	client client.Reader
}

// all maps to every profile.
func (m *profileMapper) all(ctx context.Context, _ client.Object) []reconcile.Request {
	return m.list(ctx)
}

// ofCluster maps a ManagedCluster to the profiles named after it.
func (m *profileMapper) ofCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.list(ctx, client.MatchingFields{clusterprofile.IndexByName: obj.GetName()})
}

func (m *profileMapper) list(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	profiles := &cpv1alpha1.ClusterProfileList{}
	if err := m.client.List(ctx, profiles, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterProfiles")
		return nil
	}
	requests := make([]reconcile.Request, 0, len(profiles.Items))
	for i := range profiles.Items {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{
			Namespace: profiles.Items[i].Namespace, Name: profiles.Items[i].Name}})
	}
	return requests
}
