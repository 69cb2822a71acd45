package profilewrite

import (
	"slices"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// Identity names one writer of ClusterProfiles (the mirror, an access
// provider, ...) and says which status entries are its own.
type Identity struct {
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
	// PropertyRecord, on atomic-list CRDs, is applied before the status:
	// the metadata recording the property names the status write adds,
	// with those recorded before (see atomicPath.propertyRecord).
	PropertyRecord *MetaApply
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
// what the writer wrote before the switch (see switchedPath): then Merged,
// when set, removes the entries of those it no longer wants, and AlsoApply
// sends Apply after it, taking over the ones it still wants.
type StatusWrite struct {
	Apply     StatusApply
	Merged    *cpv1alpha1.ClusterProfileStatus
	AlsoApply bool
	// DryRunMayDrop, when set, has the apply sent first as a dry run, and
	// for real only if the dry run removes no entry outside DryRunMayDrop
	// (see ApplyKeepsOthers). The API server switches to a new CRD's schema a
	// moment after the CRD is stored, and the writer's cache can see the
	// new CRD first; an apply the server still merges atomically replaces
	// each list it sends, every other writer's entries with it.
	DryRunMayDrop *Ownership
}

// Plan returns the write that brings current (nil when the profile does not
// exist) to desire, or nil when it would change nothing: an unchanged world
// costs no request. listMaps tells whether the installed CRD's status lists
// are list-maps. On atomic ones, the writer's entries are replaced within the
// current lists, and every other writer's are kept (see statusPath).
func Plan(current *cpv1alpha1.ClusterProfile, desire Desire, listMaps bool, w Identity) (*Write, error) {
	path := w.pathOf(current, listMaps)
	meta := path.meta(desire)
	if current == nil {
		if meta == nil {
			return nil, nil // a writer without metadata never creates a profile
		}
		return &Write{Meta: meta, Status: path.status(nil, desire.Status, newOwnership())}, nil
	}
	own, err := OwnershipOf(current, w.FieldManager)
	if err != nil {
		return nil, err
	}
	write := &Write{Current: current}
	if meta != nil && !MetaUpToDate(current, *meta, own) {
		write.Meta = meta
	}
	write.Status = path.status(current, desire.Status, own)
	if write.Meta == nil && write.Status == nil {
		return nil, nil
	}
	write.PropertyRecord = path.propertyRecord(current, write)
	return write, nil
}

// Carries tells whether p holds anything of the writer's status (see each
// statusPath's carries).
func (w Identity) Carries(p *cpv1alpha1.ClusterProfile, listMaps bool) bool {
	return w.pathOf(p, listMaps).carries(p)
}

// OwnStatus is the part of p's status made of the writer's own entries
// and conditions, by their keys (whoever wrote them last).
func (w Identity) OwnStatus(p *cpv1alpha1.ClusterProfile) cpv1alpha1.ClusterProfileStatus {
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

// statusPath is how a writer's share of a profile's status is written on
// one kind of CRD. There are three: listMapsPath, the common one, where a
// Server-Side Apply of the writer's share is the whole story; atomicPath,
// for CRDs whose status lists are atomic (OCM's copy, older than
// cluster-inventory-api v0.1.2); and switchedPath, for a profile on a CRD
// switched from atomic lists to list-maps that may still hold what the
// writer wrote before. The last two go together once no supported CRD has
// atomic lists.
type statusPath interface {
	// meta is the metadata and spec the writer applies for desire.
	meta(desire Desire) *MetaApply
	// status is the status write that brings current (nil for a profile
	// about to be created) to want, or nil when it would change nothing.
	// own is what the writer's applies own of current.
	status(current *cpv1alpha1.ClusterProfile, want StatusApply, own Ownership) *StatusWrite
	// propertyRecord is the metadata to apply before write (see
	// Write.PropertyRecord), or nil.
	propertyRecord(current *cpv1alpha1.ClusterProfile, write *Write) *MetaApply
	// carries tells whether p holds anything of the writer's status.
	carries(p *cpv1alpha1.ClusterProfile) bool
}

// pathOf picks the status path for p (nil for a profile about to be
// created) on a CRD whose status lists are list-maps or atomic.
func (w Identity) pathOf(p *cpv1alpha1.ClusterProfile, listMaps bool) statusPath {
	switch {
	case !listMaps:
		return atomicPath{w}
	case p != nil && w.wroteBeforeSwitch(p):
		return switchedPath{w}
	default:
		return listMapsPath{w}
	}
}
