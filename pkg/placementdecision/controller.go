// Package placementdecision publishes OCM's Placements in the Cluster
// Inventory format (KEP-5313): for every Placement in a namespace this hub
// publishes profiles into, PlacementDecision slices (multicluster.x-k8s.io)
// that list OCM's decisions as references to the ClusterProfiles of that
// namespace. A reference is written only for a profile that is there, so a
// consumer that follows one always finds a profile.
package placementdecision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

// Reconciler keeps each Placement's slices in line with OCM's decisions
// and the profiles its namespace holds.
//
// Queue key: Placement namespace/name. OCM's PlacementDecisions, the
// slices, profiles, membership and the ClusterManagers map to it.
type Reconciler struct {
	// client reads Placements, OCM's decisions, profiles, membership and
	// ClusterManagers through the cache, and writes.
	client client.Client
	// slices reads the slices labelled with the cluster manager's name;
	// apiReader reads one live before it is written, as the cache may not
	// have caught up with the last write yet.
	slices, apiReader client.Reader
	recorder          events.EventRecorder
	managerName       string
	upstream          *coexistence.Guard
	reports           *reportonce.Memory
	leftOut           *leftOutCounts
	// holds are the Placements whose slices wait for the profiles of the
	// clusters they chose (holdWrite); clock times them.
	holds *holds
	clock clock.PassiveClock
}

// Reconcile brings one Placement's slices in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if yielding, err := r.upstream.Passive(ctx); err != nil || yielding {
		return ctrl.Result{}, err
	}
	if wait := r.holds.throttled(req.NamespacedName, r.clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	world, err := r.world(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	desired := DesiredSlices(world)
	existing, err := r.existing(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := plan(existing, desired.Slices)
	if p.Empty() {
		r.holds.forget(req.NamespacedName)
	} else if wait := r.holds.wait(req.NamespacedName, existing, desired, r.clock.Now()); wait > 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Holding the PlacementDecision slices while the profiles of chosen clusters appear",
			"lacking", len(desired.LeftOut[LeftOutNoProfile]), "wait", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.report(ctx, req, world.Placement, desired.LeftOut)
	for _, s := range p.Apply {
		if err := r.apply(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, s := range p.Delete {
		if err := r.delete(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	if p.Empty() {
		ctrl.LoggerFrom(ctx).V(4).Info("PlacementDecision slices up to date", "slices", len(desired.Slices))
	}
	return ctrl.Result{}, nil
}

// world reads what the Placement's slices follow.
func (r *Reconciler) world(ctx context.Context, key types.NamespacedName) (World, error) {
	w := World{ManagerName: r.managerName}
	placement, err := optional.Get(ctx, r.client, key, &clusterv1beta1.Placement{})
	if err != nil || placement == nil || !placement.DeletionTimestamp.IsZero() {
		return w, wrapf(err, "reading Placement %s", key)
	}
	w.Placement = placement
	publishing, err := membership.Reader{Client: r.client}.NamespacePublishing(ctx, key.Namespace)
	if err != nil {
		return w, err
	}
	w.Published = len(publishing.Bindings) > 0 && publishing.Namespaces[key.Namespace] == membership.NamespaceActive
	if !w.Published {
		return w, nil
	}
	if w.Decisions, err = r.decisionsOf(ctx, placement); err != nil {
		return w, err
	}
	w.LeftOut = map[string]string{}
	for _, chosen := range ChosenClusters(w.Decisions) {
		why, err := r.leftOutReason(ctx, key.Namespace, chosen.ClusterName, publishing)
		if err != nil {
			return w, err
		}
		if why != "" {
			w.LeftOut[chosen.ClusterName] = why
		}
	}
	return w, nil
}

// decisionsOf lists OCM's PlacementDecisions of the Placement: labelled with
// its name and controlled by it (a stale one of an earlier Placement of the
// name is not its).
func (r *Reconciler) decisionsOf(ctx context.Context, placement *clusterv1beta1.Placement) ([]clusterv1beta1.PlacementDecision, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.client.List(ctx, list, client.InNamespace(placement.Namespace),
		client.MatchingLabels{clusterv1beta1.PlacementLabel: placement.Name}); err != nil {
		return nil, fmt.Errorf("listing PlacementDecisions of Placement %s/%s: %w", placement.Namespace, placement.Name, err)
	}
	var owned []clusterv1beta1.PlacementDecision
	for _, pd := range list.Items {
		if metav1.IsControlledBy(&pd, placement) {
			owned = append(owned, pd)
		}
	}
	return owned, nil
}

// leftOutReason says why a reference to cluster's profile in namespace
// would not resolve ("" when it would): the namespace does not publish the
// cluster, or the profile of this cluster manager is not there.
//
// It runs once per chosen cluster on every look at a Placement, so it reads
// the cache without copying: nothing read here is changed or kept.
func (r *Reconciler) leftOutReason(ctx context.Context, namespace, cluster string, publishing membership.Publishing) (string, error) {
	mc, err := optional.Get(ctx, r.client, types.NamespacedName{Name: cluster}, &clusterv1.ManagedCluster{}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return "", wrapf(err, "reading ManagedCluster %s", cluster)
	}
	if !membership.ServedIn(mc, publishing, namespace) {
		return LeftOutUnpublished, nil
	}
	key := types.NamespacedName{Namespace: namespace, Name: cluster}
	profile, err := optional.Get(ctx, r.client, key, &cpv1alpha1.ClusterProfile{}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return "", wrapf(err, "reading ClusterProfile %s", key)
	}
	if profile == nil || !profile.DeletionTimestamp.IsZero() || profile.Spec.ClusterManager.Name != r.managerName {
		return LeftOutNoProfile, nil
	}
	return "", nil
}

// existing lists the slices labelled with the cluster manager and the
// Placement's name.
func (r *Reconciler) existing(ctx context.Context, key types.NamespacedName) ([]cpv1alpha1.PlacementDecision, error) {
	list := &cpv1alpha1.PlacementDecisionList{}
	err := r.slices.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{cpv1alpha1.PlacementKeyLabel: key.Name})
	return list.Items, wrapf(err, "listing the PlacementDecision slices of Placement %s", key)
}

// apply writes one slice, unless the API server has it as wanted already
// (the cache had not caught up with our last write): what this capability
// owns of it, nothing else.
func (r *Reconciler) apply(ctx context.Context, want *cpv1alpha1.PlacementDecision) error {
	key := client.ObjectKeyFromObject(want)
	live, err := optional.Get(ctx, r.apiReader, key, &cpv1alpha1.PlacementDecision{})
	if err != nil || (live != nil && live.DeletionTimestamp.IsZero() && upToDate(live, want)) {
		return wrapf(err, "reading PlacementDecision %s", key)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Applying PlacementDecision slice", "slice", want.Name, "decisions", len(want.Decisions))
	body := applyBody{TypeMeta: want.TypeMeta, Metadata: applyMetadata{Name: want.Name, Namespace: want.Namespace,
		Labels: want.Labels, OwnerReferences: want.OwnerReferences}, Decisions: want.Decisions, SchedulerName: want.SchedulerName}
	return wrapf(ssa.Apply(ctx, r.client, want.DeepCopy(), body, FieldManager), "applying PlacementDecision %s", key)
}

// delete deletes a slice no longer wanted, if the API server still has it
// labelled for the same Placement.
func (r *Reconciler) delete(ctx context.Context, have *cpv1alpha1.PlacementDecision) error {
	key := client.ObjectKeyFromObject(have)
	live, err := optional.Get(ctx, r.apiReader, key, &cpv1alpha1.PlacementDecision{})
	if err != nil || live == nil || !live.DeletionTimestamp.IsZero() ||
		live.Labels[cpv1alpha1.PlacementKeyLabel] != have.Labels[cpv1alpha1.PlacementKeyLabel] ||
		live.Labels[cpv1alpha1.LabelClusterManagerKey] != r.managerName {
		return wrapf(err, "reading PlacementDecision %s", key)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleting PlacementDecision slice that is no longer wanted", "slice", have.Name)
	err = r.client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.UID), ResourceVersion: ptr.To(live.ResourceVersion)})
	return wrapf(client.IgnoreNotFound(err), "deleting PlacementDecision %s", key)
}

// applyBody is a slice as applied: only the fields this capability owns.
type applyBody struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        applyMetadata                `json:"metadata"`
	Decisions       []cpv1alpha1.ClusterDecision `json:"decisions"`
	SchedulerName   string                       `json:"schedulerName"`
}

type applyMetadata struct {
	Name            string                  `json:"name"`
	Namespace       string                  `json:"namespace"`
	Labels          map[string]string       `json:"labels"`
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
