package mirror

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	clustersdkv1beta2 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// clustersOfSet maps a set to the clusters its selector picks. On an update
// it is called for the old and the new object, so a selector change reaches
// the clusters that leave the set as well as those that join it.
func (r *Reconciler) clustersOfSet(ctx context.Context, obj client.Object) []reconcile.Request {
	set, ok := obj.(*clusterv1beta2.ManagedClusterSet)
	if !ok {
		return nil
	}
	names, err := r.clusterNamesOfSet(ctx, set)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping ManagedClusterSet to clusters", "managedClusterSet", set.Name)
	}
	return requestsFor(names)
}

// clustersOfBinding maps a binding to the clusters of its set, plus the
// clusters that have a profile in its namespace (which covers a set that is
// gone or a binding whose set changed).
func (r *Reconciler) clustersOfBinding(ctx context.Context, obj client.Object) []reconcile.Request {
	binding, ok := obj.(*clusterv1beta2.ManagedClusterSetBinding)
	if !ok {
		return nil
	}
	names, err := r.clusterNamesOfBinding(ctx, binding)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping ManagedClusterSetBinding to clusters", "managedClusterSetBinding", client.ObjectKeyFromObject(binding))
	}
	profiled, err := r.clusterNamesProfiledIn(ctx, binding.Namespace)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterProfiles", "namespace", binding.Namespace)
	}
	return requestsFor(names.Union(profiled))
}

// clustersOfNamespace maps a namespace to the clusters bound into it and the
// clusters that have a profile there.
func (r *Reconciler) clustersOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	log := ctrl.LoggerFrom(ctx)
	names, err := r.clusterNamesProfiledIn(ctx, obj.GetName())
	if err != nil {
		log.Error(err, "Listing ClusterProfiles", "namespace", obj.GetName())
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.client.List(ctx, bindings, client.InNamespace(obj.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		log.Error(err, "Listing ManagedClusterSetBindings", "namespace", obj.GetName())
	}
	for i := range bindings.Items {
		bound, err := r.clusterNamesOfBinding(ctx, &bindings.Items[i])
		if err != nil {
			log.Error(err, "Mapping ManagedClusterSetBinding to clusters", "managedClusterSetBinding", client.ObjectKeyFromObject(&bindings.Items[i]))
		}
		names = names.Union(bound)
	}
	return requestsFor(names)
}

// clustersSharingID maps a ManagedCluster to the other clusters whose id it
// can change: those claiming its name or its claimed id, and the one named
// like its claimed id. On an update it is called for the old and the new
// object, so a claim that changes or goes reaches the clusters that shared
// the old id as well as those that share the new one. The cluster itself is
// left out: its own events reach it through For.
func (r *Reconciler) clustersSharingID(ctx context.Context, obj client.Object) []reconcile.Request {
	cluster, ok := obj.(*clusterv1.ManagedCluster)
	if !ok {
		return nil
	}
	names := sets.New[string]()
	for _, id := range IndexClusterIDCandidates(cluster) {
		holders := &clusterv1.ManagedClusterList{}
		if err := r.client.List(ctx, holders, client.MatchingFields{IndexClusterIDCandidate: id}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusters holding an id", "id", id)
			continue
		}
		for i := range holders.Items {
			names.Insert(holders.Items[i].Name)
		}
	}
	names.Delete(cluster.Name)
	return requestsFor(names)
}

// idChanged passes what can change which cluster holds an id: a cluster
// appearing or going, starting to be deleted, or its id.k8s.io claim
// changing. Names never change.
func idChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldCluster, okOld := e.ObjectOld.(*clusterv1.ManagedCluster)
			newCluster, okNew := e.ObjectNew.(*clusterv1.ManagedCluster)
			return okOld && okNew && (ClaimedID(oldCluster) != ClaimedID(newCluster) ||
				oldCluster.DeletionTimestamp.IsZero() != newCluster.DeletionTimestamp.IsZero())
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// allClusters maps an event that can change every profile (the CRD's
// schema, OCM's built-in mirror turning on or off) to every cluster.
func (r *Reconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusters")
		return nil
	}
	names := sets.New[string]()
	for i := range clusters.Items {
		names.Insert(clusters.Items[i].Name)
	}
	return requestsFor(names)
}

// clusterOfAgentAddon maps the agent's ManagedClusterAddOn, which lives in
// its cluster's namespace, to that cluster.
func clusterOfAgentAddon(_ context.Context, obj client.Object) []reconcile.Request {
	if obj.GetName() != agentapi.AddonName {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
}

func (r *Reconciler) clusterNamesOfSet(ctx context.Context, set *clusterv1beta2.ManagedClusterSet) (sets.Set[string], error) {
	names := sets.New[string]()
	selector, err := clustersdkv1beta2.BuildClusterSelector(set)
	if err != nil {
		return names, err
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.client.List(ctx, clusters, client.MatchingLabelsSelector{Selector: selector}, client.UnsafeDisableDeepCopy); err != nil {
		return names, err
	}
	for i := range clusters.Items {
		names.Insert(clusters.Items[i].Name)
	}
	return names, nil
}

func (r *Reconciler) clusterNamesOfBinding(ctx context.Context, binding *clusterv1beta2.ManagedClusterSetBinding) (sets.Set[string], error) {
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: binding.Spec.ClusterSet}, set); err != nil {
		return sets.New[string](), client.IgnoreNotFound(err)
	}
	return r.clusterNamesOfSet(ctx, set)
}

// clusterNamesProfiledIn returns the clusters that have one of our profiles in a namespace.
func (r *Reconciler) clusterNamesProfiledIn(ctx context.Context, namespace string) (sets.Set[string], error) {
	names := sets.New[string]()
	profiles := &cpv1alpha1.ClusterProfileList{}
	if err := r.client.List(ctx, profiles, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return names, err
	}
	for i := range profiles.Items {
		if managedBy(&profiles.Items[i], r.managerName) {
			names.Insert(profiles.Items[i].Name)
		}
	}
	return names, nil
}

func requestsFor(names sets.Set[string]) []reconcile.Request {
	requests := make([]reconcile.Request, 0, names.Len())
	for name := range names {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	}
	return requests
}

func isClusterProfileCRD() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		_, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		return ok && obj.GetName() == clusterprofile.CRDName
	})
}
