package profilewrite

import (
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

// listMapsPath is the status path on a CRD whose status lists are
// list-maps: the API server merges each writer's apply by key, so the
// writer sends its share and managedFields say what it owns.
type listMapsPath struct{ w Identity }

func (listMapsPath) meta(desire Desire) *MetaApply { return desire.Meta }

// status is the writer's apply, unless every entry of it is already there
// and owned by the writer, and nothing more is.
func (listMapsPath) status(current *cpv1alpha1.ClusterProfile, want StatusApply, own Ownership) *StatusWrite {
	if current == nil && want.Empty() {
		return nil
	}
	if current != nil && StatusUpToDate(current, want, own) {
		return nil
	}
	return &StatusWrite{Apply: want}
}

func (listMapsPath) propertyRecord(*cpv1alpha1.ClusterProfile, *Write) *MetaApply { return nil }

// carries reads managedFields: an entry of the writer's name that the
// writer does not own is somebody else's.
func (l listMapsPath) carries(p *cpv1alpha1.ClusterProfile) bool {
	return fieldmanager.WrittenBy(p, l.w.FieldManager, "status")
}
