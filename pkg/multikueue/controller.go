// Package multikueue keeps, for every ClusterProfile the hub publishes in
// Kueue's namespace, a Kueue MultiKueueCluster that points at it, and
// optionally a MultiKueueConfig listing them: Kueue users no longer write
// one per cluster by hand, nor remove it by hand when the cluster leaves.
package multikueue

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
)

// Reconciler keeps one MultiKueueCluster per published profile in Kueue's
// namespace.
//
// Queue key: ClusterProfile namespace/name; only keys in Kueue's namespace
// are acted on. The name is also the MultiKueueCluster's. Membership events
// (sets, bindings, cluster labels, namespaces) and MultiKueueCluster events
// map to it.
type Reconciler struct {
	// client reads profiles and membership through the cache, and writes.
	client client.Client
	// objects reads Kueue's objects through the cache (the manager's client
	// would read unstructured objects from the API server).
	objects client.Reader
	// apiReader reads managedFields, which the cache drops, before a write.
	apiReader client.Reader
	recorder  events.EventRecorder
	opts      Options
	reports   *reportonce.Memory
	// created are the MultiKueueClusters applied that the cache does not
	// show yet: not applied again meanwhile.
	created *cachelag.Creations
}

// Readers are where the controllers read: Cache for what they watch,
// API for managedFields before a write.
type Readers struct {
	Cache, API client.Reader
}

// NewReconciler builds the controller's reconciler.
func NewReconciler(c client.Client, readers Readers, recorder events.EventRecorder, opts Options) *Reconciler {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	return &Reconciler{client: c, objects: readers.Cache, apiReader: readers.API, recorder: recorder, opts: opts,
		reports: reportonce.New(), created: cachelag.New(clock.RealClock{})}
}

// SetupWithManager wires the watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&cpv1alpha1.ClusterProfile{}, builder.WithPredicates(predicate.NewPredicateFuncs(r.inKueueNamespace))).
		Watches(newUnstructured(ClusterKind), handler.EnqueueRequestsFromMapFunc(r.profileOfCluster))
	return membership.ProfileMapper{Client: mgr.GetClient(), Namespace: r.opts.Namespace}.Watch(b).Complete(r)
}

// Reconcile brings one MultiKueueCluster in line with its profile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Namespace != r.opts.Namespace {
		return ctrl.Result{}, nil
	}
	served, err := r.served(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	current, err := r.current(ctx, ClusterKind, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if current != nil {
		r.created.Seen(req.Name)
	}
	desired := DesiredCluster(req.Name, served, r.opts.ManagerName)
	act := plan(current, desired, r.opts.ManagerName)
	r.reportClash(ctx, req, act)
	switch act {
	case actionApply:
		return r.apply(ctx, current, desired)
	case actionDelete:
		return ctrl.Result{}, r.delete(ctx, current)
	}
	ctrl.LoggerFrom(ctx).V(4).Info("MultiKueueCluster up to date", "action", act.String())
	return ctrl.Result{}, nil
}

// served tells whether the profile is one the hub publishes in its
// namespace: ours, and named after a cluster the namespace serves. Its
// labels do not count.
func (r *Reconciler) served(ctx context.Context, key types.NamespacedName) (bool, error) {
	profile := &cpv1alpha1.ClusterProfile{}
	err := r.client.Get(ctx, key, profile)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading ClusterProfile %s: %w", key, err)
	}
	return membership.Reader{Client: r.client}.ServesProfile(ctx, profile, r.opts.ManagerName)
}

// current reads Kueue's object of kind and name from the cache; nil when absent.
func (r *Reconciler) current(ctx context.Context, gvk schemaKind, name string) (*unstructured.Unstructured, error) {
	return readObject(ctx, r.objects, gvk, name)
}

func (r *Reconciler) reportClash(ctx context.Context, req ctrl.Request, act action) {
	findings := map[string]string{}
	if act == actionClash {
		findings["clash"] = req.Name
	}
	if len(r.reports.Update(req.Name, findings)) == 0 {
		return
	}
	ctrl.LoggerFrom(ctx).Info("Not creating a MultiKueueCluster: one we did not create holds the name", "multiKueueCluster", req.Name)
	profile := &cpv1alpha1.ClusterProfile{}
	if err := r.client.Get(ctx, req.NamespacedName, profile); err == nil && r.recorder != nil {
		r.recorder.Eventf(profile, nil, corev1.EventTypeWarning, ReasonNameClash, actionMultiKueue,
			"MultiKueueCluster %s exists and was not created for this ClusterProfile; leaving it alone", req.Name)
	}
}

// apply creates or updates the MultiKueueCluster; a create the cache does
// not show yet is not sent again until cachelag.Patience has passed.
func (r *Reconciler) apply(ctx context.Context, current, desired *unstructured.Unstructured) (ctrl.Result, error) {
	if current != nil {
		return ctrl.Result{}, applyOwned(ctx, r.client, r.apiReader, current, desired)
	}
	if wait := r.created.Wait(desired.GetName()); wait > 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the cache to show the MultiKueueCluster just created", "wait", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if err := applyOwned(ctx, r.client, r.apiReader, nil, desired); err != nil {
		return ctrl.Result{}, err
	}
	r.created.Created(desired.GetName())
	return ctrl.Result{}, nil
}

func (r *Reconciler) delete(ctx context.Context, current *unstructured.Unstructured) error {
	return deleteOwned(ctx, r.client, r.apiReader, current)
}

// ours tells whether obj (read with managedFields) is one this capability
// created: our label and our field manager.
func ours(obj client.Object, managerName string) bool {
	return obj.GetLabels()[LabelCreatedBy] == managerName && fieldmanager.WrittenBy(obj, FieldManager)
}
