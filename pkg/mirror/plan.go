package mirror

import (
	"encoding/json"
	"errors"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// step is the work for one profile. A step with nothing set is never planned:
// an unchanged world plans no steps and so sends no requests.
type step struct {
	key types.NamespacedName
	// current is the profile as last seen; nil when it must be created.
	current *cpv1alpha1.ClusterProfile
	// meta is applied when metadata or spec must change (or to create).
	meta *clusterprofile.MetaApply
	// status is written when the mirror's share of the status must change.
	status *statusWrite
	// delete removes a profile that is no longer wanted.
	delete bool
	// clashWith names the other cluster manager holding the profile's name.
	clashWith string
}

// statusWrite is either a Server-Side Apply (list-map CRDs) or, on CRDs with
// atomic status lists, a whole merged status written under optimistic lock.
type statusWrite struct {
	apply  clusterprofile.StatusApply
	merged *cpv1alpha1.ClusterProfileStatus
}

// planInput is everything plan decides from.
type planInput struct {
	clusterName string
	managerName string
	desired     Desired
	// existing are the profiles named after the cluster, in any namespace.
	existing   []*cpv1alpha1.ClusterProfile
	namespaces map[string]NamespaceState
	// listMaps is false when the installed CRD's status lists are atomic.
	listMaps bool
}

// mirroredConditionTypes are the condition types only the mirror writes.
var mirroredConditionTypes = sets.New(clusterprofile.ConditionControlPlaneHealthy, clusterprofile.ConditionJoined)

// plan compares desired with existing and returns the writes that close the
// gap, in namespace order. It does no I/O.
func plan(in planInput) ([]step, error) {
	existing := make(map[string]*cpv1alpha1.ClusterProfile, len(in.existing))
	for _, p := range in.existing {
		existing[p.Namespace] = p
	}
	var steps []step
	var errs []error
	for _, ns := range sortedKeys(in.desired.Profiles) {
		s, err := planWanted(in, ns, existing[ns])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s != nil {
			steps = append(steps, *s)
		}
	}
	for _, ns := range sortedKeys(existing) {
		p := existing[ns]
		if _, wanted := in.desired.Profiles[ns]; wanted || !managedBy(p, in.managerName) ||
			in.namespaces[ns] == NamespaceTerminating || !p.DeletionTimestamp.IsZero() {
			continue
		}
		steps = append(steps, step{key: types.NamespacedName{Namespace: ns, Name: p.Name}, current: p, delete: true})
	}
	return steps, errors.Join(errs...)
}

func planWanted(in planInput, ns string, current *cpv1alpha1.ClusterProfile) (*step, error) {
	key := types.NamespacedName{Namespace: ns, Name: in.clusterName}
	meta := profileMeta(key, in.desired.Profiles[ns], in.managerName)
	status := clusterprofile.StatusApply{
		NamespacedName: key,
		Version:        in.desired.Status.Version,
		Conditions:     in.desired.Status.Conditions,
		Properties:     in.desired.Status.Properties,
	}
	if !in.listMaps {
		meta.Annotations = map[string]string{AnnotationMirroredProperties: propertyNamesJSON(status.Properties)}
	}
	switch {
	case current == nil:
		s := &step{key: key, meta: &meta}
		if !status.Empty() {
			s.status = statusFor(in.listMaps, nil, status)
		}
		return s, nil
	case !managedBy(current, in.managerName):
		return &step{key: key, current: current, clashWith: current.Spec.ClusterManager.Name}, nil
	case !current.DeletionTimestamp.IsZero():
		return nil, nil // the delete event brings us back to recreate it
	}
	own, err := clusterprofile.OwnershipOf(current, FieldManager)
	if err != nil {
		return nil, err
	}
	s := &step{key: key, current: current}
	if !clusterprofile.MetaUpToDate(current, meta, own) {
		s.meta = &meta
	}
	if in.listMaps {
		if !clusterprofile.StatusUpToDate(current, status, own) {
			s.status = &statusWrite{apply: status}
		}
	} else {
		s.status = statusFor(false, current, status)
	}
	if s.meta == nil && s.status == nil {
		return nil, nil
	}
	return s, nil
}

// statusFor builds the status write; on atomic-list CRDs it merges the
// mirror's entries into current and returns nil when nothing would change.
func statusFor(listMaps bool, current *cpv1alpha1.ClusterProfile, want clusterprofile.StatusApply) *statusWrite {
	if listMaps {
		return &statusWrite{apply: want}
	}
	var currentStatus cpv1alpha1.ClusterProfileStatus
	previous := sets.New[string]()
	if current != nil {
		currentStatus = current.Status
		previous = mirroredPropertyNames(current)
	}
	owned := clusterprofile.Ownership{
		Version:    true,
		Conditions: mirroredConditionTypes,
		// The properties the mirror wrote before (from its annotation) and
		// the ones it writes now; any other property belongs to someone else.
		Properties:      previous.Union(sets.New(propertyNameList(want.Properties)...)),
		AccessProviders: sets.New[string](),
	}
	merged := clusterprofile.MergeStatus(currentStatus, want, owned)
	if current != nil && equality.Semantic.DeepEqual(merged, current.Status) {
		return nil
	}
	return &statusWrite{apply: want, merged: &merged}
}

// managedBy tells whether a profile belongs to the named cluster manager. The
// spec field is immutable, so it is the authority; the label may be restored.
func managedBy(p *cpv1alpha1.ClusterProfile, managerName string) bool {
	return p.Spec.ClusterManager.Name == managerName
}

func mirroredPropertyNames(p *cpv1alpha1.ClusterProfile) sets.Set[string] {
	var names []string
	if raw, ok := p.Annotations[AnnotationMirroredProperties]; ok {
		_ = json.Unmarshal([]byte(raw), &names) // a mangled annotation owns nothing
	}
	return sets.New(names...)
}

func propertyNameList(properties []cpv1alpha1.Property) []string {
	names := make([]string, 0, len(properties))
	for _, p := range properties {
		names = append(names, p.Name)
	}
	return names
}

func propertyNamesJSON(properties []cpv1alpha1.Property) string {
	names := propertyNameList(properties)
	sort.Strings(names)
	raw, _ := json.Marshal(names) // a []string always marshals
	return string(raw)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
