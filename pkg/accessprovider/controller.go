// Package accessprovider writes the status.accessProviders entries through
// which consumers reach a member cluster: through cluster-proxy's user server
// (Proxy) or, opt-in, straight to the cluster's API server (Direct). Each
// source runs as its own controller and its own ClusterProfile writer, so
// neither touches the other's entry, the mirror's fields or any third
// writer's; and each writes only on profiles the hub publishes.
package accessprovider

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
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
	writer      *clusterprofile.Writer
	// deletions tells whether this process's mirror is about to delete an
	// unserved profile; nil: no mirror here.
	deletions MirrorDeletions
	unserved  *unservedSince
	now       func() time.Time
}

// MirrorDeletions forecasts whether this process's own mirror is about to
// delete a profile that no namespace serves any more (mirror.Deletions).
type MirrorDeletions interface {
	WillDelete(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (bool, error)
}

// NewReconciler builds the controller of one source, reading (the cache)
// and writing through c; deletions may be nil.
func NewReconciler(c client.Client, source Source, managerName string, deletions MirrorDeletions) *Reconciler {
	return &Reconciler{
		client:      c,
		members:     membership.Reader{Client: c},
		source:      source,
		managerName: managerName,
		writer:      clusterprofile.NewWriter(source.Identity(), c),
		deletions:   deletions,
		unserved:    newUnservedSince(),
		now:         time.Now,
	}
}

// SetupWithManager wires the profile watch, membership and the source's own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.source.Identity().FieldManager).
		Watches(&cpv1alpha1.ClusterProfile{}, r.writer.Events(func(p *cpv1alpha1.ClusterProfile) reconcile.Request {
			return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}
		}), builder.WithPredicates(touchesOwnStatus(r.source.Identity()))).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
	profiles := membership.ProfileMapper{Client: mgr.GetClient()}
	b = r.source.Twin().Watch(r.source.Watch(profiles.Watch(b), profiles), profiles.All)
	return b.Complete(r)
}

// Reconcile writes the source's entry on one profile, or removes it;
// nothing while the source's upstream twin writes the entry.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if yielding, err := r.source.Twin().Yielding(ctx); err != nil || yielding {
		return ctrl.Result{}, err
	}
	profile, err := r.writer.Get(ctx, r.client, req.NamespacedName)
	if err != nil || profile == nil {
		r.unserved.forget(req.NamespacedName)
		return ctrl.Result{}, err
	}
	served, err := r.members.ServesProfile(ctx, profile, r.managerName)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A profile the hub does not publish gets nothing, whatever it says.
	var want Desired
	if served {
		r.unserved.forget(req.NamespacedName)
		if want, err = r.source.Desired(ctx, profile); err != nil {
			return ctrl.Result{}, err
		}
	}
	write, err := r.writer.Plan(ctx, profile, profilewrite.Desire{Status: want.status(profile)})
	if err != nil || write == nil {
		ctrl.LoggerFrom(ctx).V(4).Info("Access provider entry up to date", "entry", r.entryName())
		return ctrl.Result{}, err
	}
	if !served {
		wait, err := r.leaveToTheMirror(ctx, profile)
		if err != nil {
			return ctrl.Result{}, err
		}
		if wait > 0 {
			ctrl.LoggerFrom(ctx).V(4).Info("Leaving the entry to go with the profile, which the mirror deletes",
				"entry", r.entryName(), "withdrawIn", wait)
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	r.unserved.forget(req.NamespacedName)
	ctrl.LoggerFrom(ctx).V(2).Info("Writing access provider entry",
		"clusterProfile", klog.KObj(profile), "entry", r.entryName(), "present", want.Entry != nil)
	_, err = r.writer.Execute(ctx, write)
	return clusterprofile.ResultFor(ctx, err)
}

// leaveToTheMirror is how much longer to leave the entry on an unserved
// profile: while this process's mirror is about to delete it, up to
// withdrawGrace, so the entry goes with the profile; otherwise (no mirror
// here, OCM's mirror publishing, somebody else's profile) nothing.
func (r *Reconciler) leaveToTheMirror(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (time.Duration, error) {
	key := client.ObjectKeyFromObject(profile)
	if r.deletions == nil {
		return 0, nil
	}
	deleting, err := r.deletions.WillDelete(ctx, profile)
	if err != nil || !deleting {
		return 0, err
	}
	return r.unserved.wait(key, r.now()), nil
}

func (r *Reconciler) entryName() string { return r.source.Identity().AccessProviders[0] }

// touchesOwnStatus passes profile creations, deletions and the updates that
// start a deletion or change the writer's own entries or conditions (say,
// another writer dropped them). Status writes of the mirror, which rewrite
// its own conditions and properties on every change of a cluster, pass by.
func touchesOwnStatus(identity profilewrite.Identity) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*cpv1alpha1.ClusterProfile)
		updated, newOK := e.ObjectNew.(*cpv1alpha1.ClusterProfile)
		if !oldOK || !newOK || old.DeletionTimestamp.IsZero() != updated.DeletionTimestamp.IsZero() {
			return true
		}
		return !equality.Semantic.DeepEqual(identity.OwnStatus(old), identity.OwnStatus(updated))
	}}
}
