package clusterprofile

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/client-go/util/workqueue"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Events maps ClusterProfile events to requests with key, except the
// echoes of the writer's own writes, which need no reconcile: the writer
// already knows what it wrote.
func (w *Writer) Events(key func(*cpv1alpha1.ClusterProfile) reconcile.Request) handler.TypedEventHandler[client.Object, reconcile.Request] {
	recent := w.recent
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

// Get reads a profile through reader (the cache), preferring the writer's
// own write the cache has not caught up with; nil when it is gone.
func (w *Writer) Get(ctx context.Context, reader client.Reader, key client.ObjectKey) (*cpv1alpha1.ClusterProfile, error) {
	recent := w.recent.Snapshot(key.Name) // before the cache read; see Snapshot
	profile := &cpv1alpha1.ClusterProfile{}
	err := reader.Get(ctx, key, profile)
	if apierrors.IsNotFound(err) {
		return onlyIn(key.Namespace, recent.Freshest(nil)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ClusterProfile %s: %w", key, err)
	}
	return onlyIn(key.Namespace, recent.Freshest([]*cpv1alpha1.ClusterProfile{profile})), nil
}

// Named lists every profile named name (of any writer, in any namespace)
// through reader (the cache, with the IndexByName index), with the writer's
// own writes the cache has not caught up with.
func (w *Writer) Named(ctx context.Context, reader client.Reader, name string) ([]*cpv1alpha1.ClusterProfile, error) {
	recent := w.recent.Snapshot(name) // before the cache read; see Snapshot
	list := &cpv1alpha1.ClusterProfileList{}
	if err := reader.List(ctx, list, client.MatchingFields{IndexByName: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ClusterProfiles named %s: %w", name, err)
	}
	cached := make([]*cpv1alpha1.ClusterProfile, 0, len(list.Items))
	for i := range list.Items {
		cached = append(cached, &list.Items[i])
	}
	return recent.Freshest(cached), nil
}

func onlyIn(namespace string, profiles []*cpv1alpha1.ClusterProfile) *cpv1alpha1.ClusterProfile {
	for _, p := range profiles {
		if p.Namespace == namespace {
			return p
		}
	}
	return nil
}
