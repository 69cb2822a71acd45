package placementdecision

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
