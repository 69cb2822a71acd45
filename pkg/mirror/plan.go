package mirror

import (
	"errors"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// Writer is who the mirror writes as: its field manager, the conditions and
// version only it writes, and, on CRDs with atomic status lists, the
// annotation recording the property names it wrote (they come from claims,
// so managedFields is all that could tell them from another writer's).
var Writer = profilewrite.Writer{
	FieldManager: FieldManager,
	ConditionTypes: []string{cpv1alpha1.ClusterConditionControlPlaneHealthy, clusterprofile.ConditionJoined,
		agentapi.ConditionAllNodesHealthy},
	Version:              true,
	PropertiesAnnotation: AnnotationMirroredProperties,
}

// step is the work for one profile. A step with nothing set is never planned:
// an unchanged world plans no steps and so sends no requests.
type step struct {
	key types.NamespacedName
	// current is the profile as last seen; nil when it must be created.
	current *cpv1alpha1.ClusterProfile
	// write brings a wanted profile in line.
	write *profilewrite.Write
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
		if _, wanted := in.desired.Profiles[ns]; wanted || !deletesUnwanted(p, in.managerName, in.namespaces[ns]) {
			continue
		}
		steps = append(steps, step{key: types.NamespacedName{Namespace: ns, Name: p.Name}, current: p, delete: true})
	}
	return steps, errors.Join(errs...)
}

func planWanted(in planInput, ns string, current *cpv1alpha1.ClusterProfile) (*step, error) {
	key := types.NamespacedName{Namespace: ns, Name: in.clusterName}
	switch {
	case current != nil && !managedBy(current, in.managerName):
		return &step{key: key, current: current, clashWith: current.Spec.ClusterManager.Name}, nil
	case current != nil && !current.DeletionTimestamp.IsZero():
		return nil, nil // the delete event brings us back to recreate it
	}
	meta := profileMeta(key, in.desired.Profiles[ns], in.managerName)
	status := in.desired.StatusIn(ns)
	desire := profilewrite.Desire{Meta: &meta, Status: profilewrite.StatusApply{
		NamespacedName: key,
		Version:        status.Version,
		Conditions:     status.Conditions,
		Properties:     status.Properties,
	}}
	write, err := profilewrite.Plan(current, desire, in.listMaps, Writer)
	if err != nil || write == nil {
		return nil, err
	}
	return &step{key: key, current: current, write: write}, nil
}

// deletesUnwanted tells whether the mirror deletes p once no namespace
// wants it: a profile of its manager, not being deleted already, in a
// namespace that is not terminating (the namespace's own deletion takes it).
func deletesUnwanted(p *cpv1alpha1.ClusterProfile, managerName string, namespace membership.NamespaceState) bool {
	return managedBy(p, managerName) && namespace != membership.NamespaceTerminating && p.DeletionTimestamp.IsZero()
}

// managedBy tells whether a profile belongs to the named cluster manager. The
// spec field is immutable, so it is the authority; the label may be restored.
func managedBy(p *cpv1alpha1.ClusterProfile, managerName string) bool {
	return p.Spec.ClusterManager.Name == managerName
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
