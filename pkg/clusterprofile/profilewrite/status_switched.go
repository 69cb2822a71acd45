package profilewrite

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

// switchedPath is the status path on a list-map CRD for a profile that may
// still hold what the writer wrote before the CRD was switched from atomic
// lists (see wroteBeforeSwitch): those entries no apply of the writer owns,
// so an apply would never remove them. The ones it no longer wants are
// removed by key with a merged write, which keeps every other writer's
// entries whatever schema the API server applies; the apply then takes over
// the ones it still wants. Where nothing of before the switch is left, it
// writes as listMapsPath does.
type switchedPath struct{ w Identity }

func (switchedPath) meta(desire Desire) *MetaApply { return desire.Meta }

func (s switchedPath) status(current *cpv1alpha1.ClusterProfile, want StatusApply, own Ownership) *StatusWrite {
	before := s.beforeSwitch(current, own)
	write := &StatusWrite{Apply: want}
	apply := !StatusUpToDate(current, want, own)
	if unwanted := before.without(want); !unwanted.empty() {
		merged := MergeStatus(current.Status, StatusApply{}, unwanted)
		write.Merged, write.AlsoApply = &merged, apply
	} else if !apply {
		return nil
	}
	if apply && own.ownsNoListEntries() && (!before.empty() || s.w.mergedBeforeSwitch(current)) &&
		atomicApplyDrops(current.Status, want) {
		write.DryRunMayDrop = &own
	}
	return write
}

func (switchedPath) propertyRecord(*cpv1alpha1.ClusterProfile, *Write) *MetaApply { return nil }

// carries reads managedFields and, where this project merged the status
// before the switch, the writer's keys as on atomic CRDs.
func (s switchedPath) carries(p *cpv1alpha1.ClusterProfile) bool {
	return fieldmanager.WrittenBy(p, s.w.FieldManager, "status") || (s.w.mergedBeforeSwitch(p) && atomicPath(s).carries(p))
}

// wroteBeforeSwitch tells whether p may hold what the writer wrote while
// the status lists were atomic: this project merged its status
// (mergedBeforeSwitch), or it carries the writer's record of the property
// names it wrote, which only the atomic path keeps.
func (w Identity) wroteBeforeSwitch(p *cpv1alpha1.ClusterProfile) bool {
	if w.mergedBeforeSwitch(p) {
		return true
	}
	_, recorded := p.Annotations[w.PropertiesAnnotation]
	return w.PropertiesAnnotation != "" && recorded
}

// beforeSwitch are, on a list-map CRD, the entries of current that are the
// writer's as on atomic CRDs and that no apply of the writer owns: written
// by merge patch while the lists were atomic. The property names it recorded
// count while its own apply set the record (anyone may write an
// annotation); its condition types, entry names and version count where
// this project merged the status before (see mergedBeforeSwitch), not only
// where the writer's own Update entry is left.
func (s switchedPath) beforeSwitch(current *cpv1alpha1.ClusterProfile, own Ownership) Ownership {
	w := s.w
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

// mergedBeforeSwitch tells whether this project wrote p's status by merge
// patch, as its writers do while the status lists are atomic: an Update
// entry of the writer's or of another writer of the project. Another
// writer's merge patch of a whole atomic list can leave the writer's own
// entry owning nothing, and the API server then drops it; the entry of the
// writer that first wrote the status (the mirror, on the profiles it
// creates) keeps the status itself and stays.
func (w Identity) mergedBeforeSwitch(p *cpv1alpha1.ClusterProfile) bool {
	for _, entry := range p.GetManagedFields() {
		if entry.Subresource == "status" && entry.Operation == metav1.ManagedFieldsOperationUpdate &&
			(entry.Manager == w.FieldManager || strings.HasPrefix(entry.Manager, fieldmanager.Prefix)) {
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
