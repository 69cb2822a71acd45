package profilewrite

import (
	"encoding/json"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// Writer names one writer of ClusterProfiles (the mirror, an access
// provider, ...) and says which status entries are its own.
type Writer struct {
	// FieldManager is the writer's Server-Side Apply field manager.
	FieldManager string
	// ConditionTypes, AccessProviders and Version are the status entries
	// only this writer writes. On CRDs with atomic status lists,
	// managedFields cannot tell writers' entries apart; these can.
	ConditionTypes  []string
	AccessProviders []string
	Version         bool
	// PropertiesAnnotation, when set, is where the writer records on atomic
	// CRDs the names of the properties it wrote: unlike its conditions and
	// entries, they are not known in advance.
	PropertiesAnnotation string
}

// Desire is what a writer wants on one profile: its metadata and spec, nil
// for a writer that owns none (and so never creates a profile), and its
// share of the status. An empty Status owns nothing there, which withdraws
// whatever the writer wrote before.
type Desire struct {
	Meta   *MetaApply
	Status StatusApply
}

// Write is what brings one profile to a writer's desire.
type Write struct {
	// Current is the profile as read; nil when the write creates it.
	Current *cpv1alpha1.ClusterProfile
	// Claim, on atomic-list CRDs, is applied before the status: the
	// metadata recording the property names the status write adds, with
	// those recorded before (see claimFirst).
	Claim *MetaApply
	// Meta is applied when set.
	Meta *MetaApply
	// Status is written when set.
	Status *StatusWrite
}

// StatusWrite is one writer's status write: a Server-Side Apply of its share
// on list-map CRDs or, on CRDs with atomic status lists, the whole status
// with its share merged in (Merged), to be written under optimistic lock.
type StatusWrite struct {
	Apply  StatusApply
	Merged *cpv1alpha1.ClusterProfileStatus
}

// Plan returns the write that brings current (nil when the profile does not
// exist) to desire, or nil when it would change nothing: an unchanged world
// costs no request. listMaps tells whether the installed CRD's status lists
// are list-maps. On atomic ones, the writer's entries are replaced within the
// current lists, and every other writer's are kept.
func Plan(current *cpv1alpha1.ClusterProfile, desire Desire, listMaps bool, w Writer) (*Write, error) {
	meta := w.recordProperties(desire, listMaps)
	if current == nil {
		if meta == nil {
			return nil, nil // a writer without metadata never creates a profile
		}
		return &Write{Meta: meta, Status: planStatus(nil, desire.Status, listMaps, w.atomicOwnership(nil, desire.Status))}, nil
	}
	own, err := OwnershipOf(current, w.FieldManager)
	if err != nil {
		return nil, err
	}
	write := &Write{Current: current}
	if meta != nil && !MetaUpToDate(current, *meta, own) {
		write.Meta = meta
	}
	if !listMaps {
		own = w.atomicOwnership(current, desire.Status)
	}
	write.Status = planStatus(current, desire.Status, listMaps, own)
	if listMaps {
		if cleanup := w.legacyCleanup(current, desire.Status); cleanup != nil {
			write.Status = cleanup // it writes the wanted entries too
		}
	}
	if write.Meta == nil && write.Status == nil {
		return nil, nil
	}
	write.Claim = w.claimFirst(current, write, listMaps)
	return write, nil
}

// Carries tells whether p holds anything of the writer's status. On
// list-map CRDs managedFields says so; on atomic ones, whoever wrote a list
// last owns all of it, so the writer's entries are recognised by their keys.
func (w Writer) Carries(p *cpv1alpha1.ClusterProfile, listMaps bool) bool {
	if listMaps {
		return WrittenBy(p, w.FieldManager, "status")
	}
	for _, ap := range p.Status.AccessProviders {
		if slices.Contains(w.AccessProviders, ap.Name) {
			return true
		}
	}
	for _, c := range p.Status.Conditions {
		if slices.Contains(w.ConditionTypes, c.Type) {
			return true
		}
	}
	return false
}

// OwnStatus is the part of p's status made of the writer's own entries
// and conditions, by their keys (whoever wrote them last).
func (w Writer) OwnStatus(p *cpv1alpha1.ClusterProfile) cpv1alpha1.ClusterProfileStatus {
	var own cpv1alpha1.ClusterProfileStatus
	for _, ap := range p.Status.AccessProviders {
		if slices.Contains(w.AccessProviders, ap.Name) {
			own.AccessProviders = append(own.AccessProviders, ap)
		}
	}
	for _, c := range p.Status.Conditions {
		if slices.Contains(w.ConditionTypes, c.Type) {
			own.Conditions = append(own.Conditions, c)
		}
	}
	return own
}

// planStatus returns the status write that brings current (nil for a
// profile about to be created) to want, or nil when it would change nothing.
func planStatus(current *cpv1alpha1.ClusterProfile, want StatusApply, listMaps bool, owned Ownership) *StatusWrite {
	if current == nil && want.Empty() {
		return nil
	}
	if listMaps {
		if current != nil && StatusUpToDate(current, want, owned) {
			return nil
		}
		return &StatusWrite{Apply: want}
	}
	var currentStatus cpv1alpha1.ClusterProfileStatus
	if current != nil {
		currentStatus = current.Status
	}
	merged := MergeStatus(currentStatus, want, owned)
	if current != nil && equality.Semantic.DeepEqual(merged, current.Status) {
		return nil
	}
	return &StatusWrite{Apply: want, Merged: &merged}
}

// recordProperties adds, on atomic CRDs, the writer's record of the property
// names it writes to its metadata.
func (w Writer) recordProperties(desire Desire, listMaps bool) *MetaApply {
	if desire.Meta == nil || listMaps || w.PropertiesAnnotation == "" {
		return desire.Meta
	}
	meta := *desire.Meta
	meta.Annotations = maps.Clone(meta.Annotations)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	names := sets.List(propertyNames(desire.Status.Properties))
	raw, _ := json.Marshal(names) // a []string always marshals
	meta.Annotations[w.PropertiesAnnotation] = string(raw)
	return &meta
}

// atomicOwnership says which entries are the writer's where managedFields
// cannot: its fixed conditions and entries, the properties it recorded
// before and the ones it writes now. Any other entry is somebody else's.
func (w Writer) atomicOwnership(current *cpv1alpha1.ClusterProfile, want StatusApply) Ownership {
	properties := propertyNames(want.Properties).Union(w.recorded(current))
	return Ownership{
		Labels: sets.New[string](), Annotations: sets.New[string](), Spec: sets.New[string](),
		Version:         w.Version,
		Conditions:      sets.New(w.ConditionTypes...),
		Properties:      properties,
		AccessProviders: sets.New(w.AccessProviders...),
	}
}

// legacyCleanup removes, on a list-map CRD, the writer's entries it wrote
// while the CRD's status lists were atomic and no longer wants. Those
// writes were merge patches, so its Update entry in managedFields owns them,
// not an Apply entry: an apply never removes them, and OwnershipOf (which
// reads Apply entries) does not see them. While such an Update entry is
// there, the writer's entries are known by their keys, as on atomic CRDs,
// and one no longer wanted is removed by writing the merged status under
// optimistic lock, keeping every other writer's entries. Nil when there is
// nothing to remove.
func (w Writer) legacyCleanup(current *cpv1alpha1.ClusterProfile, want StatusApply) *StatusWrite {
	if !w.wroteStatusByUpdate(current) {
		return nil
	}
	merged := MergeStatus(current.Status, want, w.atomicOwnership(current, want))
	if !dropsEntries(current.Status, merged) {
		return nil
	}
	return &StatusWrite{Apply: want, Merged: &merged}
}

func (w Writer) wroteStatusByUpdate(p *cpv1alpha1.ClusterProfile) bool {
	for _, entry := range p.GetManagedFields() {
		if entry.Manager == w.FieldManager && entry.Subresource == "status" && entry.Operation == metav1.ManagedFieldsOperationUpdate {
			return true
		}
	}
	return false
}

// dropsEntries tells whether merged lacks a condition, property or access
// entry that current has.
func dropsEntries(current, merged cpv1alpha1.ClusterProfileStatus) bool {
	return !conditionTypes(merged.Conditions).IsSuperset(conditionTypes(current.Conditions)) ||
		!propertyNames(merged.Properties).IsSuperset(propertyNames(current.Properties)) ||
		!accessProviderNames(merged.AccessProviders).IsSuperset(accessProviderNames(current.AccessProviders)) ||
		(current.Version.Kubernetes != "" && merged.Version.Kubernetes == "")
}

// recorded are the property names the writer recorded on p as its own.
func (w Writer) recorded(p *cpv1alpha1.ClusterProfile) sets.Set[string] {
	var names []string
	if p != nil && w.PropertiesAnnotation != "" {
		_ = json.Unmarshal([]byte(p.Annotations[w.PropertiesAnnotation]), &names) // a mangled record owns nothing
	}
	return sets.New(names...)
}

// claimFirst is, on atomic-list CRDs, the record to apply before a status
// write that adds property names the writer has not recorded: the old names
// and the new. Recorded after the status instead, a manager killed between
// the two writes would leave a property no writer owns, never removed once
// its claim goes; recorded before, a kill leaves at most a name recorded for
// a property not yet written, which the next write drops. Nil when the
// record already holds every name, or on list-map CRDs.
func (w Writer) claimFirst(current *cpv1alpha1.ClusterProfile, write *Write, listMaps bool) *MetaApply {
	if listMaps || w.PropertiesAnnotation == "" || write.Meta == nil || write.Status == nil {
		return nil
	}
	recorded := w.recorded(current)
	wanted := propertyNames(write.Status.Apply.Properties)
	if recorded.IsSuperset(wanted) {
		return nil
	}
	claim := *write.Meta
	claim.Annotations = maps.Clone(claim.Annotations)
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	raw, _ := json.Marshal(sets.List(recorded.Union(wanted))) // a []string always marshals
	claim.Annotations[w.PropertiesAnnotation] = string(raw)
	return &claim
}
