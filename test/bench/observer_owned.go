package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// ownedObserver watches the objects one capability owns and timestamps, as
// events arrive, when every object the world wants carries what the
// capability's own functions say it must. It keeps digests, not objects.
type ownedObserver struct {
	kind ownedKind
	// read gives an object's key and digest; false for an object this
	// observer does not follow. A cluster-scoped MultiKueueCluster is keyed
	// by Kueue's namespace, where its profile is.
	read func(obj any) (types.NamespacedName, string, bool)

	mu   sync.Mutex
	want map[types.NamespacedName]string
	have map[types.NamespacedName]string
	// current counts the wanted objects that carry their digest;
	// allCurrentAt is when all last came to, zero while one does not.
	current      int
	allCurrentAt time.Time
	tally        namespaceTally
}

func newOwnedObserver(kind ownedKind, want map[types.NamespacedName]string, read func(any) (types.NamespacedName, string, bool)) *ownedObserver {
	return &ownedObserver{kind: kind, read: read, want: want, have: map[types.NamespacedName]string{},
		tally: newNamespaceTally()}
}

// startOwnedObservers watches, through a cache of their own, the objects of
// the capabilities the run turns on that own objects, and waits for its
// first list. Argo CD's Secrets are those labelled as the integration's in
// its namespace (the other observers' cache holds the token copies).
func (b *bench) startOwnedObservers(ctx context.Context) error {
	kinds := b.world.owned.ownedKindsOn()
	if len(kinds) == 0 {
		return nil
	}
	cfg := rest.CopyConfig(b.env.Config)
	cfg.QPS = -1
	opts := cache.Options{Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields()}
	if i := b.world.owned.argoCD; i >= 0 {
		opts.ByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{b.world.namespaces[i]: {}},
			Label:      labels.SelectorFromSet(labels.Set{argocd.LabelCreatedBy: b.world.owned.managerName}),
		}}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating the owned objects' observers' cache: %w", err)
	}
	for _, k := range kinds {
		o, obj := b.world.ownedObserver(k)
		if err := o.watch(ctx, c, obj); err != nil {
			return err
		}
		b.owned = append(b.owned, o)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("owned objects' observers' cache did not sync: %w", ctx.Err())
	}
	return nil
}

// ownedObserver is the observer of kind's objects, and the object whose
// informer it watches.
func (w *world) ownedObserver(k ownedKind) (*ownedObserver, client.Object) {
	switch k.gate {
	case "multikueue":
		kueue := w.namespaces[w.owned.multiKueue]
		return newOwnedObserver(k, w.wantMultiKueue(), func(obj any) (types.NamespacedName, string, bool) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return types.NamespacedName{}, "", false
			}
			return types.NamespacedName{Namespace: kueue, Name: u.GetName()}, multiKueueDigest(u.GetLabels(), u.Object["spec"]), true
		}), newMultiKueueCluster()
	case "argocd":
		return newOwnedObserver(k, w.wantArgoCD(), func(obj any) (types.NamespacedName, string, bool) {
			s, ok := obj.(*corev1.Secret)
			if !ok {
				return types.NamespacedName{}, "", false
			}
			return client.ObjectKeyFromObject(s), secretDigest(s), true
		}), &corev1.Secret{}
	default:
		return newOwnedObserver(k, w.wantSlices(), func(obj any) (types.NamespacedName, string, bool) {
			s, ok := obj.(*cpv1alpha1.PlacementDecision)
			if !ok {
				return types.NamespacedName{}, "", false
			}
			return client.ObjectKeyFromObject(s), sliceDigest(s.Labels, s.Decisions, s.SchedulerName), true
		}), &cpv1alpha1.PlacementDecision{}
	}
}

// watch follows obj's informer of c, which the caller starts.
func (o *ownedObserver) watch(ctx context.Context, c cache.Cache, obj client.Object) error {
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("creating the %s informer: %w", o.kind.kind, err)
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.observe(obj, false) },
		UpdateFunc: func(_, obj any) { o.observe(obj, false) },
		DeleteFunc: func(obj any) { o.observe(obj, true) },
	})
	if err != nil {
		return fmt.Errorf("watching %ss: %w", o.kind.kind, err)
	}
	return nil
}

func (o *ownedObserver) observe(obj any, deleted bool) {
	now := time.Now()
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	key, got, ok := o.read(obj)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	want, wanted := o.want[key]
	if !wanted {
		return
	}
	old, existed := o.have[key]
	wasCurrent := existed && old == want
	if deleted {
		if existed {
			delete(o.have, key)
			o.tally.removed(key.Namespace, now)
		}
		if wasCurrent {
			o.setCurrent(o.current-1, now)
		}
		return
	}
	o.have[key] = got
	if !existed {
		o.tally.added(key.Namespace)
	}
	switch isCurrent := got == want; {
	case isCurrent && !wasCurrent:
		o.setCurrent(o.current+1, now)
	case !isCurrent && wasCurrent:
		o.setCurrent(o.current-1, now)
	}
}

// setCurrent records how many wanted objects are as wanted, and when all
// of them last came to be.
func (o *ownedObserver) setCurrent(n int, now time.Time) {
	o.current = n
	switch {
	case n < len(o.want):
		o.allCurrentAt = time.Time{}
	case o.allCurrentAt.IsZero():
		o.allCurrentAt = now
	}
}

// expect replaces what the objects must carry (a rotated certificate) and
// recounts.
func (o *ownedObserver) expect(want map[types.NamespacedName]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.want, o.allCurrentAt = want, time.Time{}
	current := 0
	for key, got := range o.have {
		if got == want[key] {
			current++
		}
	}
	o.setCurrent(current, time.Now())
}

// allCurrent is how many wanted objects are as wanted, of how many, and
// when all last came to be; zero while one is not.
func (o *ownedObserver) allCurrent() (current, target int, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.current, len(o.want), o.allCurrentAt
}

// inNamespace is how many of the objects belong to a namespace and when it
// last held none.
func (o *ownedObserver) inNamespace(ns string) (int, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tally.in(ns)
}

// multiKueueDigest is what a MultiKueueCluster carries that the
// integration writes: its labels and spec.
func multiKueueDigest(labels map[string]string, spec any) string {
	return jsonDigest(struct {
		Labels map[string]string
		Spec   any
	}{labels, spec})
}

// secretDigest is what an Argo CD cluster Secret carries that Argo CD
// reads: its type, labels and data.
func secretDigest(s *corev1.Secret) string {
	return jsonDigest(struct {
		Type   corev1.SecretType
		Labels map[string]string
		Data   map[string][]byte
	}{s.Type, s.Labels, s.Data})
}

// sliceDigest is what a PlacementDecision slice carries that a consumer
// reads: its labels, decisions and scheduler.
func sliceDigest(labels map[string]string, decisions []cpv1alpha1.ClusterDecision, scheduler string) string {
	return jsonDigest(struct {
		Labels    map[string]string
		Decisions []cpv1alpha1.ClusterDecision
		Scheduler string
	}{labels, decisions, scheduler})
}

func jsonDigest(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and bytes, and API types
	}
	return digest(data)
}
