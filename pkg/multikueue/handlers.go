package multikueue

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// inKueueNamespace passes only profiles in Kueue's namespace, the only
// ones MultiKueue reads.
func (r *Reconciler) inKueueNamespace(obj client.Object) bool {
	return obj.GetNamespace() == r.opts.Namespace
}

// profileOfCluster maps a MultiKueueCluster to the profile of its name in
// Kueue's namespace.
func (r *Reconciler) profileOfCluster(_ context.Context, obj client.Object) []reconcile.Request {
	if obj == nil || obj.GetName() == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.opts.Namespace, Name: obj.GetName()}}}
}

// config maps any event to the one key.
func (r *ConfigReconciler) config(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: r.opts.ConfigName}}}
}
