package credsync

import (
	"context"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// blockers watches the Secrets that hold a name a copy needs, so that the
// copy is made as soon as such a Secret goes away. The syncer's caches hold
// only copies and token Secrets, and caching every Secret of the hub to
// notice one deletion would cost what the label-selected caches save; so a
// namespace with a blocked copy gets a watch of its Secrets' metadata, for
// as long as something there is blocked, and no longer.
//
// It runs as a manager runnable (after leader election, like the syncer),
// and reports a freed name as a generic event for the (namespace, cluster)
// key that wanted it.
type blockers struct {
	client metadata.Interface
	events chan event.GenericEvent

	mu  sync.Mutex
	ctx context.Context // nil until Start
	// blocked maps namespace → Secret name → the clusters whose copy it blocks.
	blocked map[string]map[string]sets.Set[string]
	// watches holds the running watch of each namespace with a blocked copy.
	watches map[string]*namespaceWatch
}

type namespaceWatch struct {
	cancel   context.CancelFunc
	informer toolscache.SharedIndexInformer
}

func newBlockers(client metadata.Interface) *blockers {
	return &blockers{
		client:  client,
		events:  make(chan event.GenericEvent, 64),
		blocked: map[string]map[string]sets.Set[string]{},
		watches: map[string]*namespaceWatch{},
	}
}

// Start runs the watches until ctx ends.
func (b *blockers) Start(ctx context.Context) error {
	b.mu.Lock()
	b.ctx = ctx
	for ns := range b.blocked {
		b.watch(ns)
	}
	b.mu.Unlock()
	<-ctx.Done()
	return nil
}

// NeedLeaderElection: only the leader syncs, so only the leader watches.
func (b *blockers) NeedLeaderElection() bool { return true }

// Set records the Secret names that block the copies of cluster in
// namespace (nil when none), replacing what was recorded before.
func (b *blockers) Set(namespace, cluster string, names []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	byName := b.blocked[namespace]
	for name, clusters := range byName {
		clusters.Delete(cluster)
		if clusters.Len() == 0 {
			delete(byName, name)
		}
	}
	for _, name := range names {
		if byName == nil {
			byName = map[string]sets.Set[string]{}
			b.blocked[namespace] = byName
		}
		if byName[name] == nil {
			byName[name] = sets.New[string]()
		}
		byName[name].Insert(cluster)
	}
	if len(byName) == 0 {
		delete(b.blocked, namespace)
		b.unwatch(namespace)
		return
	}
	if b.ctx != nil {
		b.watch(namespace)
	}
}

// watch starts the namespace's watch if it is not running; b.mu is held.
func (b *blockers) watch(namespace string) {
	if _, running := b.watches[namespace]; running {
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	informer := metadatainformer.NewFilteredMetadataInformer(b.client, corev1.SchemeGroupVersion.WithResource("secrets"),
		namespace, 0, toolscache.Indexers{}, nil).Informer()
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if m, ok := metaOf(obj); ok {
				b.freed(m.Namespace, m.Name)
			}
		},
	})
	b.watches[namespace] = &namespaceWatch{cancel: cancel, informer: informer}
	go informer.Run(ctx.Done())
	go b.afterSync(ctx, namespace, informer)
}

// afterSync catches a holder deleted between the failed create and the
// start of the watch: a blocked name the first list does not show is free.
func (b *blockers) afterSync(ctx context.Context, namespace string, informer toolscache.SharedIndexInformer) {
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return
	}
	b.mu.Lock()
	var names []string
	for name := range b.blocked[namespace] {
		names = append(names, name)
	}
	b.mu.Unlock()
	for _, name := range names {
		if _, exists, err := informer.GetStore().GetByKey(namespace + "/" + name); err == nil && !exists {
			b.freed(namespace, name)
		}
	}
}

// unwatch stops the namespace's watch; b.mu is held.
func (b *blockers) unwatch(namespace string) {
	if w, ok := b.watches[namespace]; ok {
		w.cancel()
		delete(b.watches, namespace)
	}
}

// freed sends an event for every key that waited for the name.
func (b *blockers) freed(namespace, name string) {
	b.mu.Lock()
	clusters := sets.List(b.blocked[namespace][name])
	b.mu.Unlock()
	for _, cluster := range clusters {
		ctrl.Log.WithName(ControllerName).V(2).Info("A Secret that blocked a token copy is gone; syncing again",
			"secret", types.NamespacedName{Namespace: namespace, Name: name}, "cluster", cluster)
		b.events <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster}}}
	}
}

func metaOf(obj any) (*metav1.PartialObjectMetadata, bool) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	return m, ok
}

// blockedNames lists the blocked names as namespace/name.
func (b *blockers) blockedNames() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for ns, byName := range b.blocked {
		for name := range byName {
			out = append(out, ns+"/"+name)
		}
	}
	sort.Strings(out)
	return out
}
