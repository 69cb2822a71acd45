package placementdecision

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
)

// Options configure the capability.
type Options struct {
	// ManagerName is the cluster manager name: a reference is written only
	// to a profile of this manager, and every slice carries it as label.
	ManagerName string
	// Workers is the number of Placements reconciled in parallel.
	Workers int
}

// API is the Cluster Inventory PlacementDecision this capability writes.
var API = cpv1alpha1.GroupVersion.WithKind("PlacementDecision")

// placementAPIs are OCM's Placement API, which it reads.
var placementAPIs = []schema.GroupVersionKind{
	schema.GroupVersion(clusterv1beta1.GroupVersion).WithKind("Placement"),
	schema.GroupVersion(clusterv1beta1.GroupVersion).WithKind("PlacementDecision"),
}

// Capability is the publishing of placement decisions as the manager
// starts it: gate ClusterProfilePlacementDecision. Its teardown deletes the
// slices it wrote, which needs the right to list and delete them
// everywhere, so it runs only when the operator asks for cleanup.
func Capability(opts Options) capability.Capability {
	return capability.Capability{
		Name:     CapabilityName,
		Gate:     features.ClusterProfilePlacementDecision,
		Requires: append(append([]schema.GroupVersionKind{clusterprofile.API, API}, placementAPIs...), membership.APIs...),
		Indexes:  []fieldindex.Index{membership.Index},
		Setup: func(ctx context.Context, mgr ctrl.Manager, _ capability.Gates) error {
			return Setup(ctx, mgr, opts)
		},
		Teardown: func(ctx context.Context, mgr ctrl.Manager) error {
			return Teardown(ctx, mgr, opts)
		},
		TeardownIsOptIn: true,
	}
}

// Setup registers the controller. Its slice cache holds only the slices
// labelled with the cluster manager's name.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := fieldindex.ClusterWide(ctx, mgr.GetCache(), &clusterv1beta1.PlacementDecision{}, ChosenClusterKey, chosenClusters); err != nil {
		return err
	}
	slices, err := filteredcache.New(mgr, &cpv1alpha1.PlacementDecision{}, cache.ByObject{
		Label: labels.SelectorFromSet(labels.Set{cpv1alpha1.LabelClusterManagerKey: opts.ManagerName})})
	if err != nil {
		return err
	}
	recorder := eventnote.Truncating(mgr.GetEventRecorder(ControllerName))
	r := &Reconciler{client: mgr.GetClient(), slices: slices, apiReader: mgr.GetAPIReader(), recorder: recorder, managerName: opts.ManagerName,
		upstream: &coexistence.Guard{Recorder: recorder, BuiltIn: &builtInWriter}, reports: reportonce.New(), leftOut: newLeftOutCounts(),
		holds: newHolds(), clock: clock.RealClock{}}
	m := mapper{client: mgr.GetClient(), holds: r.holds, clock: r.clock}
	b := ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		For(&clusterv1beta1.Placement{}).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(m.ofDecision)).
		WatchesRawSource(source.Kind[client.Object](slices, &cpv1alpha1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(m.ofSlice))).
		Watches(&cpv1alpha1.ClusterProfile{}, handler.EnqueueRequestsFromMapFunc(m.ofProfile), builder.WithPredicates(profileLifecycle())).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(m.ofSet)).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(m.ofNamespace)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(m.ofCluster), builder.WithPredicates(clusterMembership())).
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(m.ofNamespace), builder.WithPredicates(membership.LifecycleChanged()))
	if capability.APIServed(mgr.GetRESTMapper(), schema.GroupVersion(operatorv1.GroupVersion).WithKind("ClusterManager")) {
		r.upstream.Reader = mgr.GetClient()
		b = b.Watches(&operatorv1.ClusterManager{}, handler.EnqueueRequestsFromMapFunc(m.all), builder.WithPredicates(upstreamSwitched()))
	} else {
		mgr.GetLogger().WithName(ControllerName).Info("ClusterManager API not served; not checking for OCM's own writer of PlacementDecision slices")
	}
	return b.Complete(r)
}

// Teardown deletes the slices this capability wrote for the cluster
// manager: labelled with its name, and written by FieldManager. Slices OCM's
// own writer made are left alone.
func Teardown(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	deleted, err := capability.EachListed(ctx, mgr.GetAPIReader(), &cpv1alpha1.PlacementDecisionList{}, func(ctx context.Context, obj client.Object) (bool, error) {
		if !fieldmanager.WrittenBy(obj, FieldManager) {
			return false, nil
		}
		return true, client.IgnoreNotFound(mgr.GetClient().Delete(ctx, obj))
	}, client.MatchingLabels{cpv1alpha1.LabelClusterManagerKey: opts.ManagerName})
	if deleted > 0 {
		ctrl.Log.WithName("placement-decisions-teardown").Info("Deleted the PlacementDecision slices this capability wrote", "deleted", deleted)
	}
	return err
}
