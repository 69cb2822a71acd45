package clusterprofile

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
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
	profile *cpv1alpha1.ClusterProfile
	deleted bool
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
	byNS[p.Namespace] = recentWrite{profile: p, deleted: deleted}
}

func (w *RecentWrites) forget(key types.NamespacedName) {
	byNS := w.byName[key.Name]
	delete(byNS, key.Namespace)
	if len(byNS) == 0 {
		delete(w.byName, key.Name)
	}
}

// Observed is called for every add or update the informer delivers. It
// returns true when the event only reports our own latest write.
func (w *RecentWrites) Observed(p *cpv1alpha1.ClusterProfile) (echo bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	recent, ok := w.byName[p.Name][p.Namespace]
	if !ok {
		return false
	}
	if recent.deleted {
		if recent.profile.UID != p.UID {
			// Someone created a new object under the name we deleted.
			w.forget(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
		return false
	}
	switch cmp, err := resourceversion.CompareResourceVersion(p.ResourceVersion, recent.profile.ResourceVersion); {
	case err != nil || cmp > 0 || recent.profile.UID != p.UID:
		w.forget(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		return false
	case cmp == 0:
		w.forget(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		return true
	default: // an older version; ours is still on its way
		return true
	}
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

// Freshest merges the cached profiles named name with our own writes that the
// cache has not seen yet, returning the newest known version of each (our own
// deletions removed, our own creations added).
func (w *RecentWrites) Freshest(name string, cached []*cpv1alpha1.ClusterProfile) []*cpv1alpha1.ClusterProfile {
	w.mu.Lock()
	defer w.mu.Unlock()
	recents := w.byName[name]
	if len(recents) == 0 {
		return cached
	}
	out := make([]*cpv1alpha1.ClusterProfile, 0, len(cached)+len(recents))
	seen := make(map[string]bool, len(cached))
	for _, c := range cached {
		seen[c.Namespace] = true
		recent, ok := recents[c.Namespace]
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
	for ns, recent := range recents {
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
