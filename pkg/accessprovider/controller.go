// Package accessprovider writes the status.accessProviders entries through
// which consumers reach a member cluster: through cluster-proxy's user server
// (Proxy) or, opt-in, straight to the cluster's API server (Direct). Each
// source runs as its own controller with its own field manager, so neither
// touches the other's entry, the mirror's fields or any third writer's.
package accessprovider

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	cpclient "sigs.k8s.io/cluster-inventory-api/client/clientset/versioned/typed/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// Reconciler keeps one source's entry on every ClusterProfile the hub
// publishes (membership.Reader.ServesProfile: a profile of the cluster
// manager, named after a cluster its namespace serves), and off every other
// profile, whatever its labels say.
//
// Queue key: ClusterProfile namespace/name.
type Reconciler struct {
	client      client.Client
	members     membership.Reader
	source      Source
	managerName string
	applier     clusterprofile.Applier
	schema      *clusterprofile.SchemaReader
	recent      *clusterprofile.RecentWrites
}

// NewReconciler builds the controller of one source, reading through c and
// writing through profiles.
func NewReconciler(c client.Client, profiles cpclient.ClusterProfilesGetter, source Source, managerName string) *Reconciler {
	return &Reconciler{
		client:      c,
		members:     membership.Reader{Client: c},
		source:      source,
		managerName: managerName,
		applier:     clusterprofile.Applier{Profiles: profiles, FieldManager: source.FieldManager()},
		schema:      &clusterprofile.SchemaReader{Reader: c},
		recent:      clusterprofile.NewRecentWrites(),
	}
}

// SetupWithManager wires the profile watch and the source's own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.source.FieldManager()).
		Watches(&cpv1alpha1.ClusterProfile{}, clusterprofile.ProfileEvents(r.recent, func(p *cpv1alpha1.ClusterProfile) reconcile.Request {
			return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
	b = membership.ProfileMapper{Client: mgr.GetClient()}.Watch(b)
	return r.source.Watch(b, &profileMapper{client: mgr.GetClient()}).Complete(r)
}

// Reconcile writes the source's entry on one profile, or removes it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	profile, err := r.freshProfile(ctx, req.NamespacedName)
	if err != nil || profile == nil {
		return ctrl.Result{}, err
	}
	served, err := r.members.ServesProfile(ctx, profile, r.managerName)
	if err != nil {
		return ctrl.Result{}, err
	}
	var want Desired
	if served {
		if want, err = r.source.Desired(ctx, profile, profile.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	listMaps, err := r.schema.StatusListsAreMaps(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	_, err = r.write(ctx, profile, want, listMaps)
	return clusterprofile.ResultFor(ctx, err)
}

// freshProfile reads the profile, preferring our own write the cache has not
// caught up with; nil when it is gone.
func (r *Reconciler) freshProfile(ctx context.Context, key client.ObjectKey) (*cpv1alpha1.ClusterProfile, error) {
	recent := r.recent.Snapshot(key.Name) // before the cache read; see Snapshot
	profile := &cpv1alpha1.ClusterProfile{}
	err := r.client.Get(ctx, key, profile)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ClusterProfile %s: %w", key, err)
	}
	for _, p := range recent.Freshest([]*cpv1alpha1.ClusterProfile{profile}) {
		if p.Namespace == key.Namespace {
			return p, nil
		}
	}
	return nil, nil
}

// write sends the source's share of the status if it differs from current,
// and tells whether it did.
func (r *Reconciler) write(ctx context.Context, current *cpv1alpha1.ClusterProfile, want Desired, listMaps bool) (bool, error) {
	status := clusterprofile.StatusApply{NamespacedName: client.ObjectKeyFromObject(current)}
	if want.Entry != nil {
		status.AccessProviders = append(status.AccessProviders, *want.Entry)
	}
	if want.Condition != nil {
		status.Conditions = append(status.Conditions, *want.Condition)
	}
	owned, err := r.owned(current, listMaps)
	if err != nil {
		return false, err
	}
	w := clusterprofile.PlanStatusWrite(current, status, listMaps, owned)
	if w == nil {
		ctrl.LoggerFrom(ctx).V(4).Info("Access provider entry up to date", "entry", r.source.EntryName())
		return false, nil
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Writing access provider entry",
		"clusterProfile", klog.KObj(current), "entry", r.source.EntryName(), "present", want.Entry != nil)
	written, err := r.applier.WriteStatus(ctx, current, *w)
	metrics.ProfileWrite(r.source.FieldManager(), metrics.OpStatus, err)
	if err != nil {
		return false, err
	}
	r.recent.Wrote(written)
	return true, nil
}

// owned is what the source owns on current: from managedFields on list-map
// CRDs; on atomic ones, by name, its entry and its condition types.
func (r *Reconciler) owned(current *cpv1alpha1.ClusterProfile, listMaps bool) (clusterprofile.Ownership, error) {
	if listMaps {
		return clusterprofile.OwnershipOf(current, r.source.FieldManager())
	}
	return clusterprofile.Ownership{
		Conditions:      sets.New(r.source.ConditionTypes()...),
		Properties:      sets.New[string](),
		AccessProviders: sets.New(r.source.EntryName()),
	}, nil
}
