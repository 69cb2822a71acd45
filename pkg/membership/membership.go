// Package membership is the one authority on where a ManagedCluster is
// published: which namespaces serve it, and so which namespaces may hold its
// ClusterProfile, its access provider entries and its token copies.
//
// The answer comes only from ManagedClusters, ManagedClusterSets, Bound
// ManagedClusterSetBindings and namespace metadata, and never from labels,
// names or spec fields on a ClusterProfile: anyone allowed to create a
// ClusterProfile can set those to anything. The mirror
// publishes from Served, and the access providers and the credential syncer
// act only on profiles Served says are wanted.
package membership

import (
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	clustersdkv1beta2 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta2"
)

// AnnotationPublish, set to "false" on a ManagedClusterSetBinding, keeps its
// namespace from being a consumer namespace: the binding still serves
// Placement (addons, policies), but no ClusterProfile, access entry or token
// copy is published there because of it.
const AnnotationPublish = "clusterprofile.open-cluster-management.io/publish"

// LabelClusterNamespace marks a ManagedCluster's own namespace on the hub:
// OCM's registration sets it (to the cluster's name) on the namespace it
// creates for each accepted cluster.
const LabelClusterNamespace = clusterv1.ClusterNameLabelKey

// NamespaceState is what membership needs to know of a namespace.
type NamespaceState int

const (
	NamespaceMissing NamespaceState = iota
	NamespaceActive
	NamespaceTerminating
	// NamespaceOfCluster is an active namespace labelled
	// LabelClusterNamespace. It never serves: a cluster's agents hold rights
	// there (Secrets among them), so another cluster's profile, access entry
	// or token copy must never land in it. Any value of the label counts;
	// refusing is the safe side of a mislabelled namespace.
	NamespaceOfCluster
)

// Publishing is the part of the hub that decides where clusters are
// published: sets, bindings and the state of their namespaces. (Not OCM's
// Placement, which a binding also serves.)
type Publishing struct {
	// Sets are the ManagedClusterSets to consider (others simply do not count).
	Sets []clusterv1beta2.ManagedClusterSet
	// Bindings are the ManagedClusterSetBindings to consider.
	Bindings []clusterv1beta2.ManagedClusterSetBinding
	// Namespaces holds the state of every namespace of a binding (and of
	// whatever else the caller looks at); an absent namespace is missing.
	Namespaces map[string]NamespaceState
}

// Served returns the namespaces that publish cluster, each with the set it
// is published for. A namespace serves a cluster while it is active (and no
// ManagedCluster's namespace: NamespaceOfCluster) and one of its bindings is
// Bound, publishes (see AnnotationPublish) and binds a set whose selector
// picks the cluster. A nil or deleting cluster is served nowhere.
func Served(cluster *clusterv1.ManagedCluster, publishing Publishing) map[string]string {
	served := map[string]string{}
	if cluster == nil || !cluster.DeletionTimestamp.IsZero() {
		return served
	}
	memberSets := sets.New(MemberSets(cluster, publishing.Sets)...)
	setsByNamespace := map[string][]string{}
	for i := range publishing.Bindings {
		binding := &publishing.Bindings[i]
		if !memberSets.Has(binding.Spec.ClusterSet) || !Publishes(binding) ||
			publishing.Namespaces[binding.Namespace] != NamespaceActive {
			continue
		}
		setsByNamespace[binding.Namespace] = append(setsByNamespace[binding.Namespace], binding.Spec.ClusterSet)
	}
	for ns, setNames := range setsByNamespace {
		served[ns] = chooseClusterSet(cluster, setNames)
	}
	return served
}

// ServedIn tells whether namespace publishes cluster, as Served would hold
// it, without building the map: a Placement's reconcile asks it for every
// cluster the Placement chose.
func ServedIn(cluster *clusterv1.ManagedCluster, publishing Publishing, namespace string) bool {
	if cluster == nil || !cluster.DeletionTimestamp.IsZero() || publishing.Namespaces[namespace] != NamespaceActive {
		return false
	}
	for i := range publishing.Bindings {
		binding := &publishing.Bindings[i]
		if binding.Namespace == namespace && Publishes(binding) && picks(cluster, publishing.Sets, binding.Spec.ClusterSet) {
			return true
		}
	}
	return false
}

// picks tells whether the set of the name, among all, picks the cluster.
func picks(cluster *clusterv1.ManagedCluster, all []clusterv1beta2.ManagedClusterSet, name string) bool {
	for i := range all {
		if all[i].Name == name {
			return setPicks(&all[i], cluster)
		}
	}
	return false
}

// Publishes tells whether a binding makes its namespace a consumer namespace:
// it is Bound (OCM's binding controller says its set exists and the binding
// is allowed) and it does not opt out with AnnotationPublish: "false".
func Publishes(binding *clusterv1beta2.ManagedClusterSetBinding) bool {
	return binding.DeletionTimestamp.IsZero() &&
		binding.Annotations[AnnotationPublish] != "false" &&
		meta.IsStatusConditionTrue(binding.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType)
}

// BindingsInClusterNamespaces returns the bindings of publishing that
// publish (see Publishes) but sit in a ManagedCluster's namespace, and so
// serve nothing but Placement. Reader.ClusterPublishing reads only the
// bindings of the sets that pick a cluster, so for what it reads these are
// the bindings that would otherwise have published the cluster.
func BindingsInClusterNamespaces(publishing Publishing) []*clusterv1beta2.ManagedClusterSetBinding {
	var out []*clusterv1beta2.ManagedClusterSetBinding
	for i := range publishing.Bindings {
		binding := &publishing.Bindings[i]
		if Publishes(binding) && publishing.Namespaces[binding.Namespace] == NamespaceOfCluster {
			out = append(out, binding)
		}
	}
	return out
}

// MemberSets returns the names of the sets whose selector picks the cluster.
// Sets being deleted and sets with a selector that cannot be evaluated pick
// nothing.
func MemberSets(cluster *clusterv1.ManagedCluster, all []clusterv1beta2.ManagedClusterSet) []string {
	var names []string
	for i := range all {
		if setPicks(&all[i], cluster) {
			names = append(names, all[i].Name)
		}
	}
	return names
}

// setPicks tells whether set's selector picks the cluster; a set being
// deleted, or whose selector cannot be evaluated, picks nothing.
func setPicks(set *clusterv1beta2.ManagedClusterSet, cluster *clusterv1.ManagedCluster) bool {
	if !set.DeletionTimestamp.IsZero() {
		return false
	}
	selector, err := clustersdkv1beta2.BuildClusterSelector(set)
	return err == nil && selector.Matches(labels.Set(cluster.Labels))
}

// chooseClusterSet picks the set a profile is labelled with when several
// bound sets of one namespace contain the cluster: the cluster's own
// exclusive set if it is one of them, else the first by name that can be a
// label value (a set's name may be up to 253 characters, a label value 63),
// else the first by name; so the label is stable across reconciles.
func chooseClusterSet(cluster *clusterv1.ManagedCluster, setNames []string) string {
	own := cluster.Labels[clusterv1beta2.ClusterSetLabel]
	if own != "" && slices.Contains(setNames, own) {
		return own
	}
	sort.Strings(setNames)
	for _, name := range setNames {
		if clusterprofile.IsLabelValue(name) {
			return name
		}
	}
	return setNames[0]
}
