// Package namekeys lets a controller keyed by ClusterProfile
// (namespace/name) take one key for all the profiles of a name: a cluster's
// profiles all carry its name, one in each namespace bound to it. A name key
// (Key: the name, no namespace) is served by reconciling each of them
// (Each). On a hub with thousands of clusters bound in tens of namespaces,
// the events that reach many namespaces at once would otherwise queue one
// key per profile, held with the queue metrics' timestamps:
//
//   - a start, when every watch hands over its whole cache: until the first
//     worker takes an item, NewQueue's queue keeps a namespaced key as its
//     name key;
//   - a change every profile of a cluster, or every profile, follows (a
//     cluster's client config, a rotated CA): the mapper queues name keys
//     (membership.ProfileMapper.NameKeys).
//
// controller-runtime starts a controller's workers only once every watch has
// handed its handler the whole initial list, so what arrives before the
// first Get is the start-up burst; an event in the same moment is served all
// the same, by its name's key.
package namekeys

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// NewQueue is a controller.Options.NewQueue: controller-runtime's rate-limited
// queue (the priority queue is off, see hubmanager.controllerOptions),
// folding namespaced keys into name keys until the first Get.
func NewQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return Fold(workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name}))
}

// Fold wraps q so that every key added before the first Get is its name key.
func Fold(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return &folding{TypedRateLimitingInterface: q}
}

type folding struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	working atomic.Bool
}

func (q *folding) key(req reconcile.Request) reconcile.Request {
	if q.working.Load() {
		return req
	}
	return Key(req.Name)
}

func (q *folding) Add(req reconcile.Request) { q.TypedRateLimitingInterface.Add(q.key(req)) }

func (q *folding) AddAfter(req reconcile.Request, d time.Duration) {
	q.TypedRateLimitingInterface.AddAfter(q.key(req), d)
}

func (q *folding) AddRateLimited(req reconcile.Request) {
	q.TypedRateLimitingInterface.AddRateLimited(q.key(req))
}

func (q *folding) Get() (reconcile.Request, bool) {
	q.working.Store(true)
	return q.TypedRateLimitingInterface.Get()
}

// Key is the key that stands for every profile of that name.
func Key(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
}

// Each serves req: a namespaced key by one, a name key by one for each of
// the keys named lists for it, every one of them even when some fail. The
// result asks again at the soonest any of them asks; the errors are joined.
func Each(ctx context.Context, req reconcile.Request,
	named func(ctx context.Context, name string) ([]types.NamespacedName, error),
	one func(context.Context, reconcile.Request) (reconcile.Result, error)) (reconcile.Result, error) {
	if req.Namespace != "" {
		return one(ctx, req)
	}
	keys, err := named(ctx, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	var soonest reconcile.Result
	var errs []error
	for _, key := range keys {
		result, err := one(ctx, reconcile.Request{NamespacedName: key})
		errs = append(errs, err)
		soonest = sooner(soonest, result)
	}
	return soonest, errors.Join(errs...)
}

// sooner is whichever of a and b asks to be served again first.
func sooner(a, b reconcile.Result) reconcile.Result {
	switch {
	case b.RequeueAfter <= 0:
		return a
	case a.RequeueAfter <= 0 || b.RequeueAfter < a.RequeueAfter:
		return b
	}
	return a
}
