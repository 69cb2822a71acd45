package membership

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
)

// ProfileMapper maps the events that change membership (sets, bindings,
// cluster labels, namespaces) to the existing ClusterProfiles they can
// affect, as namespace/name requests. Controllers that act on profiles the
// mirror (or OCM's built-in one) publishes use it to drop what they added
// to a profile the moment its namespace stops serving its cluster, even
// while the profile itself lingers.
type ProfileMapper struct {
	Client client.Reader
	// NameKeys maps an event that reaches profiles in several namespaces
	// (a set, a cluster, every profile) to one name key per cluster
	// (namekeys.Key), for a controller whose Reconcile serves them
	// (namekeys.Each); a binding or a namespace, which reach one namespace,
	// still map to profile keys.
	NameKeys bool
	// Namespace, when set, limits the mapping to the profiles of that
	// namespace, for a controller that acts on one namespace only: a
	// restart's events for every cluster, set and binding then queue one
	// key per profile there, not one per profile on the hub.
	Namespace string
}

// Watch adds the membership watches to a controller keyed by profile.
func (m ProfileMapper) Watch(b *builder.Builder) *builder.Builder {
	return b.
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(m.OfSet)).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(m.OfBinding)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(m.OfCluster),
			builder.WithPredicates(predicate.Or[client.Object](predicate.LabelChangedPredicate{}, DeletionStarted()))).
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(m.OfNamespace),
			builder.WithPredicates(LifecycleChanged()))
}

// OfSet maps a set to the profiles in the namespaces that bind it: only
// there can its selector or its deletion change what is served.
func (m ProfileMapper) OfSet(ctx context.Context, obj client.Object) []reconcile.Request {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := m.Client.List(ctx, bindings, client.MatchingFields{BindingClusterSetKey: obj.GetName()}, client.InNamespace(m.Namespace),
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing bindings of ManagedClusterSet", "managedClusterSet", obj.GetName())
		return nil
	}
	namespaces := sets.New[string]()
	for i := range bindings.Items {
		namespaces.Insert(bindings.Items[i].Namespace)
	}
	var requests []reconcile.Request
	for ns := range namespaces {
		requests = append(requests, m.profiles(ctx, ns)...)
	}
	return m.spread(requests)
}

// OfBinding maps a binding to the profiles in its namespace.
func (m ProfileMapper) OfBinding(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.profiles(ctx, obj.GetNamespace())
}

// OfNamespace maps a namespace to the profiles in it.
func (m ProfileMapper) OfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.profiles(ctx, obj.GetName())
}

// All maps an event that can change every profile (a rotated CA, say) to
// every profile; with NameKeys, to the name of every ManagedCluster: what
// such an event changes is what the hub publishes, and it publishes only
// profiles of clusters that exist (one whose cluster went is served by that
// cluster's own deletion event). Listing the clusters, not the profiles,
// keeps the event from copying every profile of the hub at once.
func (m ProfileMapper) All(ctx context.Context, _ client.Object) []reconcile.Request {
	if !m.NameKeys || m.Namespace != "" {
		return m.spread(m.profiles(ctx, ""))
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := m.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusters")
		return nil
	}
	keys := make([]reconcile.Request, 0, len(clusters.Items))
	for i := range clusters.Items {
		keys = append(keys, namekeys.Key(clusters.Items[i].Name))
	}
	return keys
}

// OfCluster maps a ManagedCluster to the profiles named after it.
func (m ProfileMapper) OfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.spread(m.profiles(ctx, "", client.MatchingFields{clusterprofile.IndexByName: obj.GetName()}))
}

// spread is requests, which reach several namespaces, as one name key per
// name when the mapper maps to name keys.
func (m ProfileMapper) spread(requests []reconcile.Request) []reconcile.Request {
	if !m.NameKeys {
		return requests
	}
	names := sets.New[string]()
	keys := make([]reconcile.Request, 0, len(requests))
	for _, req := range requests {
		if !names.Has(req.Name) {
			names.Insert(req.Name)
			keys = append(keys, namekeys.Key(req.Name))
		}
	}
	return keys
}

// profiles lists the profiles in namespace ("": every namespace) as
// requests; with Namespace set, only those there.
func (m ProfileMapper) profiles(ctx context.Context, namespace string, opts ...client.ListOption) []reconcile.Request {
	if m.Namespace != "" {
		if namespace != "" && namespace != m.Namespace {
			return nil
		}
		namespace = m.Namespace
	}
	list := &cpv1alpha1.ClusterProfileList{}
	if err := m.Client.List(ctx, list, append(opts, client.InNamespace(namespace), client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterProfiles")
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{
			Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
	}
	return requests
}

// LifecycleChanged passes creations, deletions, the start of a deletion (of
// a namespace: termination) and a namespace becoming or ceasing to be a
// ManagedCluster's namespace (IsClusterNamespace); for the namespaces it is
// used on, nothing else an update can change matters.
func LifecycleChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return deletionStarted(e) || IsClusterNamespace(e.ObjectOld) != IsClusterNamespace(e.ObjectNew)
	}}
}

// DeletionStarted passes only updates that set (or clear) deletionTimestamp.
func DeletionStarted() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc:  deletionStarted,
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func deletionStarted(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
}
