package clusterprofile

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/util/workqueue"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// RecentWrites lets a controller read its own writes before the informer
// cache has caught up with them.
//
// Without it, a reconcile that runs between a write and the watch event that
// reports it sees the old object, decides the write is still needed and sends
// it again; and the watch event of every write re-queues the writer for a
// reconcile that finds nothing to do. Both cost requests at scale. So each
// write's response is kept here until the informer delivers that version (the
// event is then an echo and needs no reconcile), and reads prefer it while
// the cache is older.
type RecentWrites struct {
	mu sync.Mutex
	// byName is keyed by profile name, then namespace: a cluster's profiles all
	// carry its name, and that is how the controllers look them up.
	byName map[string]map[string]recentWrite
}

type recentWrite struct {
	// profile is what our latest write returned.
	profile *cpv1alpha1.ClusterProfile
	// versions are the resourceVersions our writes produced that the
	// informer has not delivered yet, oldest first.
	versions []string
	deleted  bool
}

// NewRecentWrites returns an empty overlay.
func NewRecentWrites() *RecentWrites {
	return &RecentWrites{byName: map[string]map[string]recentWrite{}}
}

// Wrote records the object a create, apply or patch returned.
func (w *RecentWrites) Wrote(p *cpv1alpha1.ClusterProfile) {
	w.set(p, false)
}

// Deleted records that the profile was deleted by us.
func (w *RecentWrites) Deleted(p *cpv1alpha1.ClusterProfile) {
	w.set(p, true)
}

func (w *RecentWrites) set(p *cpv1alpha1.ClusterProfile, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	byNS := w.byName[p.Name]
	if byNS == nil {
		byNS = map[string]recentWrite{}
		w.byName[p.Name] = byNS
	}
	recent := byNS[p.Namespace]
	if recent.profile == nil || recent.profile.UID != p.UID || deleted {
		recent.versions = nil
	}
	byNS[p.Namespace] = recentWrite{profile: p, versions: append(recent.versions, p.ResourceVersion), deleted: deleted}
}

func (w *RecentWrites) forget(key types.NamespacedName) {
	byNS := w.byName[key.Name]
	delete(byNS, key.Namespace)
	if len(byNS) == 0 {
		delete(w.byName, key.Name)
	}
}

// Observed is called for every add or update the informer delivers. It
// returns true when the event only reports one of our own writes. A version
// in between ours was written by someone else, so it is news even though
// our latest write is newer.
func (w *RecentWrites) Observed(p *cpv1alpha1.ClusterProfile) (echo bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	recent, ok := w.byName[p.Name][p.Namespace]
	if !ok {
		return false
	}
	if recent.profile.UID != p.UID {
		if !recent.deleted {
			w.forget(key) // our object was replaced by another one
		}
		return false
	}
	if recent.deleted {
		return false
	}
	for i, rv := range recent.versions {
		if rv != p.ResourceVersion {
			continue
		}
		if i == len(recent.versions)-1 {
			w.forget(key) // the cache has caught up with our latest write
		} else {
			recent.versions = recent.versions[i+1:]
			w.byName[p.Name][p.Namespace] = recent
		}
		return true
	}
	if cmp, err := resourceversion.CompareResourceVersion(p.ResourceVersion, recent.profile.ResourceVersion); err != nil || cmp > 0 {
		w.forget(key) // newer than anything we wrote
	}
	return false
}

// ObservedDelete is called for every delete the informer delivers. It returns
// true when the deletion was ours.
func (w *RecentWrites) ObservedDelete(p *cpv1alpha1.ClusterProfile) (echo bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	recent, ok := w.byName[p.Name][p.Namespace]
	if !ok {
		return false
	}
	w.forget(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	return recent.deleted && recent.profile.UID == p.UID
}

// RecentSnapshot is a copy of our recent writes under one name.
type RecentSnapshot map[string]recentWrite

// Snapshot copies our recent writes under name. Take it *before* reading the
// cache: an entry is dropped as soon as the informer delivers our version,
// which can happen while the cache is being read, and a snapshot taken
// afterwards would then miss a write that the read did not see either.
func (w *RecentWrites) Snapshot(name string) RecentSnapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	snapshot := make(RecentSnapshot, len(w.byName[name]))
	for ns, recent := range w.byName[name] {
		snapshot[ns] = recent
	}
	return snapshot
}

// Freshest merges profiles read from the cache after the snapshot was taken
// with our own writes, returning the newest known version of each: our
// deletions removed, our creations added, and whichever of cache and write
// is newer for the rest.
func (s RecentSnapshot) Freshest(cached []*cpv1alpha1.ClusterProfile) []*cpv1alpha1.ClusterProfile {
	if len(s) == 0 {
		return cached
	}
	out := make([]*cpv1alpha1.ClusterProfile, 0, len(cached)+len(s))
	seen := make(map[string]bool, len(cached))
	for _, c := range cached {
		seen[c.Namespace] = true
		recent, ok := s[c.Namespace]
		switch {
		case !ok:
			out = append(out, c)
		case recent.deleted:
			if recent.profile.UID != c.UID {
				out = append(out, c) // a new object under the name we deleted
			}
			// else: we deleted it and the cache has not heard yet.
		case newer(recent.profile, c):
			out = append(out, recent.profile)
		default:
			out = append(out, c)
		}
	}
	for ns, recent := range s {
		if !seen[ns] && !recent.deleted {
			out = append(out, recent.profile)
		}
	}
	return out
}

func newer(a, b *cpv1alpha1.ClusterProfile) bool {
	if a.UID != b.UID {
		// A different object: ours was written after the cached one was read.
		return true
	}
	cmp, err := resourceversion.CompareResourceVersion(a.ResourceVersion, b.ResourceVersion)
	return err == nil && cmp > 0
}

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
