package credsync

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// keyMapper maps events to (namespace, cluster) keys.
type keyMapper struct {
	client client.Reader
}

// ofProfile maps a profile to its own key, whoever's it is: a profile that
// stops being one the syncer serves must lose its copies.
func (m *keyMapper) ofProfile(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
}

// ofClusterNamespace maps a ManagedServiceAccount or a token Secret, which
// live in their cluster's namespace, to every profile named after that
// cluster.
func (m *keyMapper) ofClusterNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	cluster := obj.GetNamespace()
	profiles, err := clusterprofile.Named(ctx, m.client, cluster)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterProfiles", "cluster", cluster)
		return nil
	}
	requests := make([]reconcile.Request, 0, len(profiles))
	for _, key := range profiles {
		requests = append(requests, reconcile.Request{NamespacedName: key})
	}
	return requests
}

// ofCopy maps a synced copy back to the namespace and cluster it serves, so
// a hand edit or deletion is repaired; and a Secret with the synced-from
// label but without the marks (managed-serviceaccount's own syncer's copy)
// to the profile that owns it, a profile being named after its cluster, so
// the syncer marks it (or not) while it yields to that syncer.
func (m *keyMapper) ofCopy(_ context.Context, obj client.Object) []reconcile.Request {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	if cluster, _, ok := cpcreds.CopySource(secret); ok {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: secret.Namespace, Name: cluster}}}
	}
	var requests []reconcile.Request
	for _, ref := range secret.OwnerReferences {
		if ref.Kind == "ClusterProfile" && ref.APIVersion == cpv1alpha1.GroupVersion.String() {
			requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: secret.Namespace, Name: ref.Name}})
		}
	}
	return requests
}
