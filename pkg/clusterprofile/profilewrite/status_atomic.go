package profilewrite

import (
	"encoding/json"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// atomicPath is the status path on a CRD whose status lists are atomic
// (no list-map markers): an apply of a list would replace it whole, so the
// writer merges its entries into the current lists (MergeStatus) and writes
// the whole status under optimistic lock. Whoever wrote a list last owns
// all of it, so the writer's entries are recognised by their keys, and the
// names of the properties it writes, not known in advance, by the record
// it keeps in its PropertiesAnnotation.
type atomicPath struct{ w Identity }

// meta adds the writer's record of the property names it writes to its
// metadata.
func (a atomicPath) meta(desire Desire) *MetaApply {
	if desire.Meta == nil || a.w.PropertiesAnnotation == "" {
		return desire.Meta
	}
	meta := *desire.Meta
	meta.Annotations = maps.Clone(meta.Annotations)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	names := sets.List(propertyNames(desire.Status.Properties))
	raw, _ := json.Marshal(names) // a []string always marshals
	meta.Annotations[a.w.PropertiesAnnotation] = string(raw)
	return &meta
}

// status is the current status with the writer's entries replaced by
// want's, unless that is the current status already. managedFields own
// whole lists here, so own is not read.
func (a atomicPath) status(current *cpv1alpha1.ClusterProfile, want StatusApply, _ Ownership) *StatusWrite {
	if current == nil && want.Empty() {
		return nil
	}
	var currentStatus cpv1alpha1.ClusterProfileStatus
	if current != nil {
		currentStatus = current.Status
	}
	merged := MergeStatus(currentStatus, want, a.ownership(current, want))
	if current != nil && equality.Semantic.DeepEqual(merged, current.Status) {
		return nil
	}
	return &StatusWrite{Apply: want, Merged: &merged}
}

// ownership says which entries are the writer's where managedFields
// cannot: its fixed conditions and entries, the properties it recorded
// before and the ones it writes now. Any other entry is somebody else's.
func (a atomicPath) ownership(current *cpv1alpha1.ClusterProfile, want StatusApply) Ownership {
	properties := propertyNames(want.Properties).Union(a.w.recorded(current))
	return Ownership{
		Labels: sets.New[string](), Annotations: sets.New[string](), Spec: sets.New[string](),
		Version:         a.w.Version,
		Conditions:      sets.New(a.w.ConditionTypes...),
		Properties:      properties,
		AccessProviders: sets.New(a.w.AccessProviders...),
	}
}

// propertyRecord is the record to apply before a status write that adds property
// names the writer has not recorded: the old names and the new. Recorded
// after the status instead, a manager killed between the two writes would
// leave a property no writer owns, never removed once its claim goes;
// recorded before, a kill leaves at most a name recorded for a property not
// yet written, which the next write drops. Nil when the record already
// holds every name.
func (a atomicPath) propertyRecord(current *cpv1alpha1.ClusterProfile, write *Write) *MetaApply {
	if a.w.PropertiesAnnotation == "" || write.Meta == nil || write.Status == nil {
		return nil
	}
	recorded := a.w.recorded(current)
	wanted := propertyNames(write.Status.Apply.Properties)
	if recorded.IsSuperset(wanted) {
		return nil
	}
	record := *write.Meta
	record.Annotations = maps.Clone(record.Annotations)
	if record.Annotations == nil {
		record.Annotations = map[string]string{}
	}
	raw, _ := json.Marshal(sets.List(recorded.Union(wanted))) // a []string always marshals
	record.Annotations[a.w.PropertiesAnnotation] = string(raw)
	return &record
}

// carries finds the writer's entries and conditions by their keys.
func (a atomicPath) carries(p *cpv1alpha1.ClusterProfile) bool {
	for _, ap := range p.Status.AccessProviders {
		if slices.Contains(a.w.AccessProviders, ap.Name) {
			return true
		}
	}
	for _, c := range p.Status.Conditions {
		if slices.Contains(a.w.ConditionTypes, c.Type) {
			return true
		}
	}
	return false
}

// recorded are the property names the writer recorded on p as its own.
func (w Identity) recorded(p *cpv1alpha1.ClusterProfile) sets.Set[string] {
	var names []string
	if p != nil && w.PropertiesAnnotation != "" {
		_ = json.Unmarshal([]byte(p.Annotations[w.PropertiesAnnotation]), &names) // a mangled record owns nothing
	}
	return sets.New(names...)
}
