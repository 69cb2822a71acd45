// Package accessprovider writes the status.accessProviders entries through
// which consumers reach a member cluster: through cluster-proxy's user server
// (Proxy) or, opt-in, straight to the cluster's API server (Direct). Each
// source runs as its own controller and its own ClusterProfile writer, so
// neither touches the other's entry, the mirror's fields or any third
// writer's; and each writes only on profiles the hub publishes.
package accessprovider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
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
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
)

// Reconciler keeps one source's entry on every ClusterProfile the hub
// publishes (membership.Reader.ServesProfile: a profile of the cluster
// manager, named after a cluster its namespace serves), and off every other
// profile, whatever its labels say.
//
// Queue key: ClusterProfile namespace/name, or the cluster's name for all
// its profiles (namekeys: a start's burst, an event reaching many namespaces).
type Reconciler struct {
	client  client.Client
	members membership.Reader
	// live reads membership from the API server, to confirm a revocation.
	live        membership.Reader
	source      Source
	managerName string
	writer      *clusterprofile.Writer
	// deletions tells whether this process's mirror is about to delete an
	// unserved profile; nil: no mirror here.
	deletions MirrorDeletions
	unserved  *unservedSince
	// revocations paces revoking an entry another writer keeps putting back.
	revocations *revocations
	now         func() time.Time
}

// MirrorDeletions forecasts whether this process's own mirror is about to
// delete a profile that no namespace serves any more (mirror.Deletions).
type MirrorDeletions interface {
	WillDelete(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (bool, error)
}

// NewReconciler builds the controller of one source, reading (the cache)
// and writing through c, and confirming every revocation with live, the API
// server read without a cache (see revoke); deletions may be nil.
func NewReconciler(c client.Client, live client.Reader, source Source, managerName string, deletions MirrorDeletions) *Reconciler {
	return &Reconciler{
		client:      c,
		members:     membership.Reader{Client: c},
		live:        membership.Reader{Client: live},
		source:      source,
		managerName: managerName,
		writer:      clusterprofile.NewWriter(source.Identity(), c),
		deletions:   deletions,
		unserved:    newUnservedSince(),
		revocations: newRevocations(),
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
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1), NewQueue: namekeys.NewQueue})
	profiles := membership.ProfileMapper{Client: mgr.GetClient(), NameKeys: true}
	b = r.source.Twin().Watch(r.source.Watch(profiles.Watch(b), profiles), profiles.All)
	return b.Complete(r)
}

// Reconcile serves a profile's key, or a cluster's name key (namekeys) by
// serving each profile of that name.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return namekeys.Each(ctx, req, r.profilesNamed, r.reconcileProfile)
}

func (r *Reconciler) profilesNamed(ctx context.Context, name string) ([]types.NamespacedName, error) {
	return clusterprofile.Named(ctx, r.client, name)
}

// reconcileProfile writes the source's entry on one profile the hub
// publishes, or revokes it from one it does not. While the source's upstream twin writes
// the entry the source writes nothing new, but it revokes all the same:
// yielding never keeps an entry where the hub does not publish it.
func (r *Reconciler) reconcileProfile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	profile, err := r.writer.Get(ctx, r.client, req.NamespacedName)
	if err != nil || profile == nil {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, err
	}
	served, err := r.members.ServesProfile(ctx, profile, r.managerName)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A profile the hub does not publish gets nothing, whatever it says.
	if !served {
		return r.revoke(ctx, profile)
	}
	r.forget(req.NamespacedName)
	if yielding, err := r.source.Twin().Yielding(ctx); err != nil || yielding {
		return ctrl.Result{}, err
	}
	want, err := r.source.Desired(ctx, profile)
	if err != nil {
		return ctrl.Result{}, err
	}
	write, err := r.writer.Plan(ctx, profile, profilewrite.Desire{Status: want.status(profile)})
	if err != nil || write == nil {
		ctrl.LoggerFrom(ctx).V(4).Info("Access provider entry up to date", "entry", r.entryName())
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Writing access provider entry",
		"clusterProfile", klog.KObj(profile), "entry", r.entryName(), "present", want.Entry != nil)
	_, err = r.writer.Execute(ctx, write)
	return clusterprofile.ResultFor(ctx, err)
}

// revoke takes the source's entry off a profile the hub does not publish:
// the writer's own share by withdrawing it, and an entry of the same name
// that another writer owns (an upstream twin, whoever may write the status)
// by removing it, on profiles of this cluster manager only. Another
// manager's profiles are never touched; nor is one this process's mirror is
// about to delete, for a while (leaveToTheMirror). An entry another writer
// puts back is revoked again after a growing pause (revocations).
func (r *Reconciler) revoke(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(profile)
	withdraw, err := r.writer.Plan(ctx, profile, profilewrite.Desire{Status: Desired{}.status(profile)})
	if err != nil {
		return ctrl.Result{}, err
	}
	foreign := profile.Spec.ClusterManager.Name == r.managerName && hasEntry(profile, r.entryName())
	if withdraw == nil && !foreign {
		// What was revoked is remembered until the profile is published
		// again or gone: an entry put back later is a writer looping.
		ctrl.LoggerFrom(ctx).V(4).Info("No access provider entry on an unpublished profile", "entry", r.entryName())
		return ctrl.Result{}, nil
	}
	wait, err := r.leaveToTheMirror(ctx, profile)
	if err == nil && wait == 0 {
		wait = r.revocations.wait(key, r.now())
	}
	if err != nil || wait > 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Not revoking the entry yet", "entry", r.entryName(), "revokeIn", wait)
		return ctrl.Result{RequeueAfter: wait}, err
	}
	if served, err := r.confirmUnserved(ctx, profile); err != nil || served {
		return ctrl.Result{}, err
	}
	r.unserved.forget(key)
	if withdraw != nil {
		ctrl.LoggerFrom(ctx).V(2).Info("Withdrawing access provider entry from a profile the hub does not publish", "entry", r.entryName())
		if profile, err = r.writer.Execute(ctx, withdraw); err != nil {
			return clusterprofile.ResultFor(ctx, err)
		}
	}
	if profile.Spec.ClusterManager.Name == r.managerName && hasEntry(profile, r.entryName()) {
		ctrl.LoggerFrom(ctx).Info("Removing an access provider entry another writer put on a profile the hub does not publish",
			"entry", r.entryName(), "writers", profilewrite.EntryServerWriters(profile, r.entryName()), "putBackTimes", r.revocations.times(key))
		if _, err := r.writer.RemoveEntry(ctx, profile, r.entryName()); err != nil {
			// Not recorded: a failed revocation is retried at once, not
			// after the pause an entry put back waits.
			return clusterprofile.ResultFor(ctx, err)
		}
		metrics.UpstreamWriteRevoked(metrics.KindEntry)
	}
	r.revocations.revoked(key, r.now())
	return ctrl.Result{}, nil
}

// confirmUnserved asks the API server, read live, whether it serves the
// profile after all. Each cache has its own watch, so the profile cache can
// show a profile before the binding cache shows the binding that serves it
// (a namespace just bound, where another writer already put its entry). As
// the credential syncer does before deleting a copy, the entry is revoked
// only when the live hub does not serve the profile either; one kept here
// is reconciled again when the binding reaches the cache.
func (r *Reconciler) confirmUnserved(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (bool, error) {
	served, err := r.live.ServesProfile(ctx, profile, r.managerName)
	if err != nil {
		return false, fmt.Errorf("confirming that the hub does not publish %s: %w", klog.KObj(profile), err)
	}
	if served {
		ctrl.LoggerFrom(ctx).V(2).Info("Not revoking the entry: the API server publishes the profile, the cache is behind", "entry", r.entryName())
	}
	return served, nil
}

func hasEntry(p *cpv1alpha1.ClusterProfile, name string) bool {
	return slices.ContainsFunc(p.Status.AccessProviders, func(e cpv1alpha1.AccessProvider) bool { return e.Name == name })
}

// forget drops what the reconciler remembers of a profile that is served
// again or gone.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.unserved.forget(key)
	r.revocations.forget(key)
}

// leaveToTheMirror is how much longer to leave the entry on an unserved
// profile: while this process's mirror is about to delete it, up to
// withdrawGrace, so the entry goes with the profile; otherwise (no mirror
// here, OCM's mirror publishing, a profile being deleted, somebody else's
// profile) nothing.
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
