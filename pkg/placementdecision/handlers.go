package placementdecision

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// ChosenClusterKey indexes OCM's PlacementDecisions by the clusters they
// name, to find the Placements a cluster's or a profile's change touches.
const ChosenClusterKey = "placementdecision.status.decisions.clusterName"

// chosenClusters is ChosenClusterKey's index function.
func chosenClusters(obj client.Object) []string {
	pd, ok := obj.(*clusterv1beta1.PlacementDecision)
	if !ok {
		return nil
	}
	names := sets.New[string]()
	for _, d := range pd.Status.Decisions {
		if d.ClusterName != "" {
			names.Insert(d.ClusterName)
		}
	}
	return sets.List(names)
}

// mapper maps the events that change a Placement's slices to Placements.
type mapper struct {
	client client.Reader
	// holds, timed by clock, learn of the profile events of held
	// Placements.
	holds *holds
	clock clock.PassiveClock
}

// ofDecision maps one of OCM's PlacementDecisions to the Placement its
// label names.
func (m mapper) ofDecision(_ context.Context, obj client.Object) []reconcile.Request {
	return placementNamed(obj.GetNamespace(), obj.GetLabels()[clusterv1beta1.PlacementLabel])
}

// ofSlice maps a slice to the Placement its placement-key names.
func (m mapper) ofSlice(_ context.Context, obj client.Object) []reconcile.Request {
	return placementNamed(obj.GetNamespace(), obj.GetLabels()[cpv1alpha1.PlacementKeyLabel])
}

// ofProfile maps a profile to the Placements of its namespace that chose
// its cluster, and touches their holds.
func (m mapper) ofProfile(ctx context.Context, obj client.Object) []reconcile.Request {
	var requests []reconcile.Request
	for _, req := range m.choosing(ctx, obj.GetName()) {
		if req.Namespace == obj.GetNamespace() {
			m.holds.touch(req.NamespacedName, m.clock.Now())
			requests = append(requests, req)
		}
	}
	return requests
}

// ofCluster maps a ManagedCluster to the Placements that chose it.
func (m mapper) ofCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.choosing(ctx, obj.GetName())
}

// ofNamespace maps a namespace (or a binding, by its namespace) to the
// Placements in it.
func (m mapper) ofNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	namespace := obj.GetNamespace()
	if namespace == "" { // a Namespace
		namespace = obj.GetName()
	}
	return m.placements(ctx, client.InNamespace(namespace))
}

// ofSet maps a set to the Placements in the namespaces that bind it.
func (m mapper) ofSet(ctx context.Context, obj client.Object) []reconcile.Request {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := m.client.List(ctx, bindings, client.MatchingFields{membership.BindingClusterSetKey: obj.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing bindings of ManagedClusterSet", "managedClusterSet", obj.GetName())
		return nil
	}
	var requests []reconcile.Request
	for _, ns := range sets.List(sets.New(namespacesOf(bindings.Items)...)) {
		requests = append(requests, m.placements(ctx, client.InNamespace(ns))...)
	}
	return requests
}

// all maps to every Placement (OCM's own writer turned on or off).
func (m mapper) all(ctx context.Context, _ client.Object) []reconcile.Request {
	return m.placements(ctx)
}

// choosing lists the Placements, in every namespace, whose OCM decisions
// name cluster (ChosenClusterKey is indexed across namespaces only). The
// cache's decisions are read, not copied: a fleet being published brings
// an event per profile, and each decision holds up to 100 clusters.
func (m mapper) choosing(ctx context.Context, cluster string) []reconcile.Request {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := m.client.List(ctx, list, client.MatchingFields{ChosenClusterKey: cluster}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing PlacementDecisions that choose a cluster", "cluster", cluster)
		return nil
	}
	var requests []reconcile.Request
	for i := range list.Items {
		requests = append(requests, m.ofDecision(ctx, &list.Items[i])...)
	}
	return requests
}

func (m mapper) placements(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	list := &clusterv1beta1.PlacementList{}
	if err := m.client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Placements")
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}

func placementNamed(namespace, name string) []reconcile.Request {
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
}

func namespacesOf(bindings []clusterv1beta2.ManagedClusterSetBinding) []string {
	namespaces := make([]string, 0, len(bindings))
	for i := range bindings {
		namespaces = append(namespaces, bindings[i].Namespace)
	}
	return namespaces
}

// profileLifecycle passes a profile's creation, deletion and the start of
// its deletion: nothing else about a profile decides whether a reference
// to it resolves (its cluster manager is immutable).
func profileLifecycle() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: membership.DeletionStarted().Update}
}

// clusterMembership passes what can change the sets a cluster is in: its
// labels, its deletion.
func clusterMembership() predicate.Predicate {
	return predicate.Or[client.Object](predicate.LabelChangedPredicate{}, membership.DeletionStarted())
}

// upstreamSwitched passes a ClusterManager's change that turns OCM's own
// writer of the slices on or off.
func upstreamSwitched() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*operatorv1.ClusterManager)
		updated, newOK := e.ObjectNew.(*operatorv1.ClusterManager)
		return !oldOK || !newOK || coexistence.EnablesBuiltInPlacementDecisions(old) != coexistence.EnablesBuiltInPlacementDecisions(updated)
	}}
}
