package clusterprofile

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ProfileEvents maps ClusterProfile events to requests with key, except the
// echoes of the writer's own writes (recorded in recent), which need no
// reconcile: the writer already knows what it wrote.
func ProfileEvents(recent *RecentWrites, key func(*cpv1alpha1.ClusterProfile) reconcile.Request) handler.TypedEventHandler[client.Object, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			if p, ok := e.Object.(*cpv1alpha1.ClusterProfile); ok && !recent.Observed(p) {
				q.Add(key(p))
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if p, ok := e.ObjectNew.(*cpv1alpha1.ClusterProfile); ok && !recent.Observed(p) {
				q.Add(key(p))
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			if p, ok := e.Object.(*cpv1alpha1.ClusterProfile); ok && !recent.ObservedDelete(p) {
				q.Add(key(p))
			}
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) {
			if p, ok := e.Object.(*cpv1alpha1.ClusterProfile); ok {
				q.Add(key(p))
			}
		},
	}
}
