package mirror

import (
	"errors"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// Identity is who the mirror writes as: its field manager, the conditions and
// version only it writes, and, on CRDs with atomic status lists, the
// annotation recording the property names it wrote (they come from claims,
// so managedFields is all that could tell them from another writer's).
var Identity = profilewrite.Identity{
	FieldManager: clusterprofile.MirrorFieldManager,
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
	// carriesFacts tells whether write carries changed facts along with
	// something written anyway: they are published, the budget not spent.
	carriesFacts bool
	// publishesFacts tells whether write publishes changed facts, which
	// starts the cluster's next minimum interval once it succeeds.
	publishesFacts bool
}

// planned is plan's answer.
type planned struct {
	steps []step
	// factsHeldFor is, when the write budget holds back changed facts of
	// some profile, how long until they may go out; factsHeld is the
	// largest change held.
	factsHeldFor time.Duration
	factsHeld    damping.Change
}

// factsBudget is the write budget of the cluster's facts (the properties
// made of its claims) at the moment of planning.
type factsBudget struct {
	rule damping.Rule
	// budget is what the rule remembers of the cluster's publications.
	budget damping.Budget
	now    time.Time
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
	facts    factsBudget
}

// plan compares desired with existing and returns the writes that close the
// gap, in namespace order. It does no I/O.
func plan(in planInput) (planned, error) {
	existing := make(map[string]*cpv1alpha1.ClusterProfile, len(in.existing))
	for _, p := range in.existing {
		existing[p.Namespace] = p
	}
	var out planned
	var errs []error
	for _, ns := range sortedKeys(in.desired.SetByNamespace) {
		s, held, err := planWanted(in, ns, existing[ns])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s != nil {
			out.steps = append(out.steps, *s)
		}
		if held.Wait > 0 && (out.factsHeldFor == 0 || held.Wait < out.factsHeldFor) {
			out.factsHeldFor = held.Wait
		}
		out.factsHeld = max(out.factsHeld, held.Change)
	}
	for _, ns := range sortedKeys(existing) {
		p := existing[ns]
		if _, wanted := in.desired.SetByNamespace[ns]; wanted || !deletesUnwanted(p, in.managerName, in.namespaces[ns]) {
			continue
		}
		out.steps = append(out.steps, step{key: types.NamespacedName{Namespace: ns, Name: p.Name}, current: p, delete: true})
	}
	return out, errors.Join(errs...)
}

// planWanted plans the write of the profile in ns. Changed facts the budget
// holds back are left as current has them, unless something else is written
// anyway: then they ride along, as that write costs consumers the same.
func planWanted(in planInput, ns string, current *cpv1alpha1.ClusterProfile) (*step, damping.Decision, error) {
	key := types.NamespacedName{Namespace: ns, Name: in.clusterName}
	switch {
	case current != nil && !managedBy(current, in.managerName):
		return &step{key: key, current: current, clashWith: current.Spec.ClusterManager.Name}, damping.Decision{}, nil
	case current != nil && !current.DeletionTimestamp.IsZero():
		return nil, damping.Decision{}, nil // the delete event brings us back to recreate it
	}
	facts := in.desired.Status.Properties
	decision := damping.Decision{Publish: true}
	var anyway *profilewrite.Write
	if current != nil {
		published := propertyValues(current.Status.Properties, facts)
		decision = in.facts.rule.Decide(published, propertyValues(facts, facts), in.facts.budget, in.facts.now)
		if decision.Change != damping.Unchanged {
			var err error
			if anyway, err = planWrite(in, key, ns, current, heldFacts(facts, published)); err != nil {
				return nil, decision, err
			}
		}
	}
	if decision.Change != damping.Unchanged && !decision.Publish && anyway == nil {
		return nil, decision, nil
	}
	write, err := planWrite(in, key, ns, current, facts)
	if err != nil || write == nil {
		return nil, damping.Decision{}, err
	}
	// Only a write the changed facts alone call for spends the cluster's
	// budget: one that goes out anyway (a condition, a label) costs
	// consumers nothing more for carrying them, and a created profile
	// rewrites none a consumer already built on.
	changed := decision.Change != damping.Unchanged
	return &step{key: key, current: current, write: write, publishesFacts: changed && anyway == nil,
		carriesFacts: changed && anyway != nil}, damping.Decision{}, nil
}

// planWrite plans the write of the profile in ns carrying facts.
func planWrite(in planInput, key types.NamespacedName, ns string, current *cpv1alpha1.ClusterProfile, facts []cpv1alpha1.Property) (*profilewrite.Write, error) {
	meta := profileMeta(key, in.desired.SetByNamespace[ns], in.managerName)
	desired := in.desired
	desired.Status.Properties = facts
	status := desired.StatusIn(ns)
	desire := profilewrite.Desire{Meta: &meta, Status: profilewrite.StatusApply{
		NamespacedName: key,
		Version:        status.Version,
		Conditions:     status.Conditions,
		Properties:     status.Properties,
	}}
	return profilewrite.Plan(current, desire, in.listMaps, Identity)
}

// propertyValues are the values in properties of the names in facts.
func propertyValues(properties, facts []cpv1alpha1.Property) map[string]string {
	names := make(sets.Set[string], len(facts))
	for _, f := range facts {
		names.Insert(f.Name)
	}
	out := make(map[string]string, len(facts))
	for _, p := range properties {
		if names.Has(p.Name) {
			out[p.Name] = p.Value
		}
	}
	return out
}

// heldFacts are facts as published (their values on the profile): each
// with its published value, those not published yet left out. A fact that
// is no longer wanted is not among them and so is withdrawn at once:
// nothing the mirror does not publish is held.
func heldFacts(facts []cpv1alpha1.Property, published map[string]string) []cpv1alpha1.Property {
	held := make([]cpv1alpha1.Property, 0, len(facts))
	for _, f := range facts {
		if value, ok := published[f.Name]; ok {
			held = append(held, cpv1alpha1.Property{Name: f.Name, Value: value})
		}
	}
	return held
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
