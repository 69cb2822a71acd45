package placementdecision

import (
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// Plan is what one Placement's slices need: the slices to apply (each
// missing or not as wanted) and those to delete (labelled for the
// Placement, and not wanted).
type Plan struct {
	Apply  []*cpv1alpha1.PlacementDecision
	Delete []*cpv1alpha1.PlacementDecision
}

// Empty tells whether nothing is to be written.
func (p Plan) Empty() bool { return len(p.Apply) == 0 && len(p.Delete) == 0 }

// plan compares the slices labelled with the cluster manager and the
// Placement's name (existing) with desired. A slice being deleted is left to
// finish: its delete event brings the Placement back.
func plan(existing []cpv1alpha1.PlacementDecision, desired []*cpv1alpha1.PlacementDecision) Plan {
	current := map[string]*cpv1alpha1.PlacementDecision{}
	for i := range existing {
		current[existing[i].Name] = &existing[i]
	}
	var p Plan
	for _, want := range desired {
		have, ok := current[want.Name]
		delete(current, want.Name)
		if !ok || (have.DeletionTimestamp.IsZero() && !upToDate(have, want)) {
			p.Apply = append(p.Apply, want)
		}
	}
	for _, have := range current {
		if have.DeletionTimestamp.IsZero() {
			p.Delete = append(p.Delete, have)
		}
	}
	slices.SortFunc(p.Delete, func(a, b *cpv1alpha1.PlacementDecision) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// upToDate tells whether have carries what want says: its labels (others
// may add their own), decisions, scheduler, and the Placement as
// controlling owner.
func upToDate(have, want *cpv1alpha1.PlacementDecision) bool {
	for key, value := range want.Labels {
		if have.Labels[key] != value {
			return false
		}
	}
	owner := metav1.GetControllerOfNoCopy(have)
	return have.SchedulerName == want.SchedulerName && owner != nil && owner.UID == want.OwnerReferences[0].UID &&
		len(have.Decisions) == len(want.Decisions) &&
		(len(want.Decisions) == 0 || equality.Semantic.DeepEqual(have.Decisions, want.Decisions))
}

// hold is a Placement whose slices are held back while the profiles of
// clusters it chose keep appearing.
type hold struct {
	// progressed is when the slices last grew to reference more profiles
	// than ever in this hold; looked when the Placement was last looked at;
	// touched when a profile of a cluster it chose last came or went (the
	// mapper's ofProfile), which tells, without a look, that profiles are
	// still appearing (throttled).
	progressed, looked, touched time.Time
	// referenced is the most profiles the slices would have referenced.
	referenced int
}

// holdWrite decides whether a Placement's write waits: a write that only
// adds references, while chosen clusters published here still lack their
// profile (the mirror is creating them: a set bound, a cold start), waits
// until no new profile has appeared for settleFor, however long the fleet
// takes to publish (a cold start of OCM's largest fleets: many minutes), so
// the slices are written once, complete, not once per profile. A write
// that drops a reference, or one with no profile lacking, goes at once.
// It returns the hold to keep (ok false: none) and how long to wait (0:
// write now).
func holdWrite(held hold, holding bool, existing []cpv1alpha1.PlacementDecision, desired Desired, now time.Time) (next hold, ok bool, wait time.Duration) {
	if len(desired.LeftOut[LeftOutNoProfile]) == 0 {
		return hold{}, false, 0
	}
	wanted := references(desired.Slices)
	if !addsOnly(existing, wanted) {
		return hold{}, false, 0
	}
	referenced := wanted.Len()
	if !holding {
		held = hold{progressed: now, referenced: referenced}
	} else if referenced > held.referenced {
		held.progressed, held.referenced = grewAt(held, now), referenced
	}
	wait = held.progressed.Add(settleFor).Sub(now)
	if wait <= 0 {
		return hold{}, false, 0
	}
	held.looked = now
	return held, true, wait
}

// grewAt is when slices found grown at now grew: at the last profile event
// since the last look, if the mapper saw one, as the look may come well
// after it (throttled).
func grewAt(held hold, now time.Time) time.Time {
	if held.touched.After(held.looked) {
		return held.touched
	}
	return now
}

// addsOnly tells whether wanted (the desired slices' references) holds
// every profile the existing slices reference (those not being deleted):
// writing them only adds.
func addsOnly(existing []cpv1alpha1.PlacementDecision, wanted sets.Set[cpv1alpha1.ClusterProfileReference]) bool {
	have := sets.New[cpv1alpha1.ClusterProfileReference]()
	for i := range existing {
		if existing[i].DeletionTimestamp.IsZero() {
			for _, d := range existing[i].Decisions {
				have.Insert(d.ClusterProfileRef)
			}
		}
	}
	return wanted.IsSuperset(have)
}

// references are the profiles slices reference.
func references(slices []*cpv1alpha1.PlacementDecision) sets.Set[cpv1alpha1.ClusterProfileReference] {
	refs := sets.New[cpv1alpha1.ClusterProfileReference]()
	for _, s := range slices {
		for _, d := range s.Decisions {
			refs.Insert(d.ClusterProfileRef)
		}
	}
	return refs
}

// holds keeps the Placements whose slices are held back.
type holds struct {
	mu          sync.Mutex
	byPlacement map[types.NamespacedName]hold
}

func newHolds() *holds { return &holds{byPlacement: map[types.NamespacedName]hold{}} }

// throttled tells how long a held Placement waits before it is looked at
// again (0: look now), as a look reads every chosen cluster and its
// profile, and a fleet being published brings an event per profile: at
// most once every lookEvery, and not before settleFor has passed since the
// last profile event, when a look could only find the hold going on; but at
// least once every lookAtLeastEvery, as only a look tells the slices grew.
func (h *holds) throttled(key types.NamespacedName, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	held, holding := h.byPlacement[key]
	if !holding {
		return 0
	}
	untilQuiet := min(held.touched.Add(settleFor).Sub(now), held.looked.Add(lookAtLeastEvery).Sub(now))
	return max(held.looked.Add(lookEvery).Sub(now), untilQuiet, 0)
}

// touch notes a profile event for a held Placement (nothing for others:
// a hold begins at a look).
func (h *holds) touch(key types.NamespacedName, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if held, holding := h.byPlacement[key]; holding {
		held.touched = now
		h.byPlacement[key] = held
	}
}

// forget drops the Placement's hold, if any: nothing is to be written (its
// slices caught up, or it is gone).
func (h *holds) forget(key types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byPlacement, key)
}

// wait is holdWrite for the Placement key, keeping its hold.
func (h *holds) wait(key types.NamespacedName, existing []cpv1alpha1.PlacementDecision, desired Desired, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	held, holding := h.byPlacement[key]
	next, ok, wait := holdWrite(held, holding, existing, desired, now)
	if ok {
		h.byPlacement[key] = next
	} else {
		delete(h.byPlacement, key)
	}
	return wait
}
