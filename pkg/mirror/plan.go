package mirror

import (
	"encoding/json"
	"errors"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
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
	status *clusterprofile.StatusWrite
	// delete removes a profile that is no longer wanted.
	delete bool
	// clashWith names the other cluster manager holding the profile's name.
	clashWith string
}

// planInput is everything plan decides from.
type planInput struct {
	clusterName string
	managerName string
	desired     Desired
	// existing are the profiles named after the cluster, in any namespace.
	existing   []*cpv1alpha1.ClusterProfile
	namespaces map[string]membership.NamespaceState
	// listMaps is false when the installed CRD's status lists are atomic.
	listMaps bool
}

// mirroredConditionTypes are the condition types only the mirror writes.
var mirroredConditionTypes = sets.New(clusterprofile.ConditionControlPlaneHealthy, clusterprofile.ConditionJoined,
	clusterprofile.ConditionAllNodesHealthy)

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
			in.namespaces[ns] == membership.NamespaceTerminating || !p.DeletionTimestamp.IsZero() {
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
		return &step{key: key, meta: &meta, status: clusterprofile.PlanStatusWrite(nil, status, in.listMaps, ownedOnAtomicLists(nil, status))}, nil
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
	statusOwned := own
	if !in.listMaps {
		statusOwned = ownedOnAtomicLists(current, status)
	}
	s.status = clusterprofile.PlanStatusWrite(current, status, in.listMaps, statusOwned)
	if s.meta == nil && s.status == nil {
		return nil, nil
	}
	return s, nil
}

// ownedOnAtomicLists says which entries are the mirror's where managedFields
// cannot (atomic status lists): its condition types, the properties it wrote
// before (from its annotation) and the ones it writes now. Any other entry
// belongs to someone else.
func ownedOnAtomicLists(current *cpv1alpha1.ClusterProfile, want clusterprofile.StatusApply) clusterprofile.Ownership {
	previous := sets.New[string]()
	if current != nil {
		previous = mirroredPropertyNames(current)
	}
	return clusterprofile.Ownership{
		Version:         true,
		Conditions:      mirroredConditionTypes,
		Properties:      previous.Union(sets.New(propertyNameList(want.Properties)...)),
		AccessProviders: sets.New[string](),
	}
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
