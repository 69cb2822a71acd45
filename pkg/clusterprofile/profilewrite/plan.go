package profilewrite

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

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
//
// On a CRD switched from atomic lists to list-maps, a profile may still hold
// what the writer wrote before the switch (see Writer.beforeSwitch): then
// Merged, when set, removes the entries of those it no longer wants, and
// AlsoApply sends Apply after it, taking over the ones it still wants.
type StatusWrite struct {
	Apply     StatusApply
	Merged    *cpv1alpha1.ClusterProfileStatus
	AlsoApply bool
	// Guard, when set, has the apply sent first as a dry run, and for real
	// only if the dry run removes no entry outside Guard (see
	// ApplyKeepsOthers). The API server switches to a new CRD's schema a
	// moment after the CRD is stored, and the writer's cache can see the
	// new CRD first; an apply the server still merges atomically replaces
	// each list it sends, every other writer's entries with it.
	Guard *Ownership
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
	if listMaps {
		write.Status = w.planListMapStatus(current, desire.Status, own)
	} else {
		write.Status = planStatus(current, desire.Status, false, w.atomicOwnership(current, desire.Status))
	}
	if write.Meta == nil && write.Status == nil {
		return nil, nil
	}
	write.Claim = w.claimFirst(current, write, listMaps)
	return write, nil
}

// Carries tells whether p holds anything of the writer's status. On
// list-map CRDs managedFields says so, and so do the writer's keys where
// this project merged the status while the lists were atomic; on atomic
// ones, whoever wrote a list last owns all of it, so the writer's entries
// are recognised by their keys.
func (w Writer) Carries(p *cpv1alpha1.ClusterProfile, listMaps bool) bool {
	if listMaps && !w.mergedBeforeSwitch(p) {
		return WrittenBy(p, w.FieldManager, "status")
	}
	if listMaps && WrittenBy(p, w.FieldManager, "status") {
		return true
	}
	// Written while the lists were atomic (see beforeSwitch), or atomic now.
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

// planListMapStatus is planStatus on a list-map CRD for a profile that may
// still hold what the writer wrote before the CRD was switched from atomic
// lists: those entries no apply of the writer owns, so an apply would never
// remove them. The ones it no longer wants are removed by key with a merged
// write, which keeps every other writer's entries whatever schema the API
// server applies; the apply then takes over the ones it still wants.
func (w Writer) planListMapStatus(current *cpv1alpha1.ClusterProfile, want StatusApply, own Ownership) *StatusWrite {
	before := w.beforeSwitch(current, own)
	write := &StatusWrite{Apply: want}
	apply := !StatusUpToDate(current, want, own)
	if unwanted := before.without(want); !unwanted.empty() {
		merged := MergeStatus(current.Status, StatusApply{}, unwanted)
		write.Merged, write.AlsoApply = &merged, apply
	} else if !apply {
		return nil
	}
	if apply && own.ownsNoListEntries() && (!before.empty() || w.mergedBeforeSwitch(current)) &&
		atomicApplyDrops(current.Status, want) {
		write.Guard = &own
	}
	return write
}

// beforeSwitch are, on a list-map CRD, the entries of current that are the
// writer's as on atomic CRDs and that no apply of the writer owns: written
// by merge patch while the lists were atomic. The property names it recorded
// count while its own apply set the record (anyone may write an
// annotation); its condition types, entry names and version count where
// this project merged the status before (see mergedBeforeSwitch), not only
// where the writer's own Update entry is left.
func (w Writer) beforeSwitch(current *cpv1alpha1.ClusterProfile, own Ownership) Ownership {
	out := newOwnership()
	st := current.Status
	recorded := sets.New[string]()
	if w.PropertiesAnnotation != "" && own.Annotations.Has(w.PropertiesAnnotation) {
		recorded = w.recorded(current)
	}
	for _, p := range st.Properties {
		if recorded.Has(p.Name) && !own.Properties.Has(p.Name) {
			out.Properties.Insert(p.Name)
		}
	}
	if !w.mergedBeforeSwitch(current) {
		return out // the fixed keys alone prove nothing on a CRD that was never atomic
	}
	out.Version = w.Version && st.Version.Kubernetes != "" && !own.Version
	for _, c := range st.Conditions {
		if slices.Contains(w.ConditionTypes, c.Type) && !own.Conditions.Has(c.Type) {
			out.Conditions.Insert(c.Type)
		}
	}
	for _, ap := range st.AccessProviders {
		if slices.Contains(w.AccessProviders, ap.Name) && !own.AccessProviders.Has(ap.Name) {
			out.AccessProviders.Insert(ap.Name)
		}
	}
	return out
}

// FieldManagerPrefix starts the field manager name of every writer in this
// project (clusterprofile-mirror, clusterprofile-access-proxy, ...).
const FieldManagerPrefix = "clusterprofile-"

// mergedBeforeSwitch tells whether this project wrote p's status by merge
// patch, as its writers do while the status lists are atomic: an Update
// entry of the writer's or of another writer of the project. Another
// writer's merge patch of a whole atomic list can leave the writer's own
// entry owning nothing, and the API server then drops it; the entry of the
// writer that first wrote the status (the mirror, on the profiles it
// creates) keeps the status itself and stays.
func (w Writer) mergedBeforeSwitch(p *cpv1alpha1.ClusterProfile) bool {
	for _, entry := range p.GetManagedFields() {
		if entry.Subresource == "status" && entry.Operation == metav1.ManagedFieldsOperationUpdate &&
			(entry.Manager == w.FieldManager || strings.HasPrefix(entry.Manager, FieldManagerPrefix)) {
			return true
		}
	}
	return false
}

// atomicApplyDrops tells whether applying want would remove an entry of
// current if the API server merged the status lists atomically: an entry,
// in a list the apply sends, that want does not hold.
func atomicApplyDrops(current cpv1alpha1.ClusterProfileStatus, want StatusApply) bool {
	// An empty share is sent as an empty condition list (see Body).
	sendsConditions := len(want.Conditions) > 0 || want.Empty()
	return (sendsConditions && !conditionTypes(want.Conditions).IsSuperset(conditionTypes(current.Conditions))) ||
		(len(want.Properties) > 0 && !propertyNames(want.Properties).IsSuperset(propertyNames(current.Properties))) ||
		(len(want.AccessProviders) > 0 &&
			!accessProviderNames(want.AccessProviders).IsSuperset(accessProviderNames(current.AccessProviders)))
}

// ApplyKeepsOthers tells whether an apply that turned before into after
// removed only entries in mayDrop (what the writer's apply owned): as the
// API server applies list-maps. Merged atomically, it would have removed
// every entry of a list it sent that it did not hold.
func ApplyKeepsOthers(before, after cpv1alpha1.ClusterProfileStatus, mayDrop Ownership) bool {
	return conditionTypes(after.Conditions).Union(mayDrop.Conditions).IsSuperset(conditionTypes(before.Conditions)) &&
		propertyNames(after.Properties).Union(mayDrop.Properties).IsSuperset(propertyNames(before.Properties)) &&
		accessProviderNames(after.AccessProviders).Union(mayDrop.AccessProviders).IsSuperset(accessProviderNames(before.AccessProviders))
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
