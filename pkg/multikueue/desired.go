package multikueue

import (
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DesiredCluster is the MultiKueueCluster that lets MultiKueue reach the
// cluster of the ClusterProfile named name in Kueue's namespace, or nil when
// that profile is not one the hub publishes there (served is false).
// Kueue resolves clusterProfileRef in its own namespace, so the name is
// all it needs.
func DesiredCluster(name string, served bool, managerName string) *unstructured.Unstructured {
	if !served {
		return nil
	}
	u := newObject(ClusterKind.Kind, name, managerName)
	u.Object["spec"] = map[string]any{
		"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": name}},
	}
	return u
}

// DesiredConfig is the MultiKueueConfig named name listing clusters (ours),
// sorted and at most MaxConfigClusters of them; nil when there are none, as
// the schema wants at least one. It also returns how many were left out.
func DesiredConfig(name string, clusters []string, managerName string) (*unstructured.Unstructured, int) {
	if len(clusters) == 0 {
		return nil, 0
	}
	sorted := append([]string(nil), clusters...)
	sort.Strings(sorted)
	left := max(len(sorted)-MaxConfigClusters, 0)
	sorted = sorted[:len(sorted)-left]
	listed := make([]any, 0, len(sorted))
	for _, c := range sorted {
		listed = append(listed, c)
	}
	u := newObject(ConfigKind.Kind, name, managerName)
	u.Object["spec"] = map[string]any{"clusters": listed}
	return u, left
}

func newObject(kind, name, managerName string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(GroupVersion.String())
	u.SetKind(kind)
	u.SetName(name)
	u.SetLabels(map[string]string{LabelCreatedBy: managerName})
	return u
}

// action is what one object needs.
type action int

const (
	actionNone   action = iota
	actionApply         // create or bring in line
	actionDelete        // ours, no longer wanted
	actionClash         // someone else's object holds the name: never touched
)

func (a action) String() string {
	return [...]string{"none", "apply", "delete", "clash"}[a]
}

// plan compares what exists (nil: nothing) with what is wanted (nil:
// nothing). Only the label tells ours here (the cache keeps no
// managedFields); the write path checks the field manager before it writes.
func plan(current, desired *unstructured.Unstructured, managerName string) action {
	switch {
	case current == nil && desired == nil:
		return actionNone
	case current == nil:
		return actionApply
	case current.GetLabels()[LabelCreatedBy] != managerName:
		if desired == nil {
			return actionNone
		}
		return actionClash
	case !current.GetDeletionTimestamp().IsZero():
		return actionNone // its delete event brings us back
	case desired == nil:
		return actionDelete
	case !equality.Semantic.DeepEqual(current.Object["spec"], desired.Object["spec"]):
		return actionApply
	}
	return actionNone
}
