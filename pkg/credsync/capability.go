package credsync

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/metadata"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
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
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

// Options configure the syncer.
type Options struct {
	ManagerName string
	Workers     int
	// Unscoped is where the tokens of ManagedServiceAccounts that name no
	// consumer namespaces go (UnscopedEverywhere when empty).
	Unscoped UnscopedTokens
	// Published builds, on the manager, the entries whose servers the copies
	// record, those of the access providers gates turn on; nil records none,
	// and cp-creds then refuses every copy.
	Published func(mgr ctrl.Manager, gates capability.Gates) (Published, error)
	// PublishedRequires are the APIs Published reads while a gate is on.
	PublishedRequires map[featuregate.Feature][]schema.GroupVersionKind
	// Gates are the runner's, for Published (the Capability sets them).
	Gates capability.Gates
	// Upstream watches managed-serviceaccount's own syncer, to which this
	// one yields; nil: not watched.
	Upstream *coexistence.TwinWatch
}

// syncedCopies selects the copies this syncer (or upstream's) writes.
func syncedCopies() labels.Selector {
	req, _ := labels.NewRequirement(LabelSyncedFrom, selection.Exists, nil) // a constant, valid key
	return labels.NewSelector().Add(*req)
}

// Setup registers the syncer. Each of its two Secret caches holds only its
// own slice of the hub's Secrets, with digests of their data: no token sits
// in the manager's memory; a copy is written with the token read from the
// API server (liveTokens).
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	tokens, err := filteredcache.New(mgr, &corev1.Secret{}, cache.ByObject{
		Label: labels.SelectorFromSet(labels.Set{LabelIsManagedServiceAccount: "true"}), Transform: secretdigest.Transform(),
	})
	if err != nil {
		return err
	}
	copies, err := filteredcache.New(mgr, &corev1.Secret{}, cache.ByObject{Label: syncedCopies(), Transform: secretdigest.Transform()})
	if err != nil {
		return err
	}
	// Copies are looked up by namespace and cluster, never within a namespace.
	if err := fieldindex.ClusterWide(ctx, copies, &corev1.Secret{}, IndexCopyOf, IndexCopy); err != nil {
		return fmt.Errorf("indexing synced Secrets: %w", err)
	}
	metadataClient, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	blocked := newBlockers(metadataClient)
	if err := mgr.Add(blocked); err != nil {
		return err
	}
	observeTokenExpiry(copies)
	r := &Reconciler{
		client: mgr.GetClient(), members: membership.Reader{Client: mgr.GetClient()},
		tokens: tokens, copies: copies, apiReader: mgr.GetAPIReader(), created: cachelag.New(clock.RealClock{}),
		recorder: eventnote.Truncating(mgr.GetEventRecorder(ControllerName)), managerName: opts.ManagerName,
		reports: reportonce.New(), blockers: blocked, unscoped: opts.Unscoped, upstream: opts.Upstream,
	}
	if err := opts.Upstream.Start(mgr); err != nil {
		return err
	}
	if opts.Published != nil {
		if r.published, err = opts.Published(mgr, opts.Gates); err != nil {
			return err
		}
	}
	m := &keyMapper{client: mgr.GetClient()}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Only a profile's creation and deletion change its copies: its
		// status, which the mirror rewrites, and its labels do not.
		Watches(&cpv1alpha1.ClusterProfile{}, handler.EnqueueRequestsFromMapFunc(m.ofProfile),
			builder.WithPredicates(membership.LifecycleChanged())).
		Watches(&authv1beta1.ManagedServiceAccount{}, handler.EnqueueRequestsFromMapFunc(m.ofClusterNamespace)).
		WatchesRawSource(source.Kind[client.Object](tokens, &corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(m.ofClusterNamespace))).
		WatchesRawSource(source.Kind[client.Object](copies, &corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(m.ofCopy))).
		// A freed name comes as namespace/cluster, the queue key itself.
		WatchesRawSource(source.Channel(blocked.events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.Workers, 1), NewQueue: namekeys.NewQueue})
	// Profile keys (namespace/name) are syncer keys: a profile is named
	// after its cluster.
	profiles := membership.ProfileMapper{Client: mgr.GetClient(), NameKeys: true}
	b = profiles.Watch(b)
	if r.published != nil {
		b = r.published.Watch(b, profiles)
	}
	return r.upstream.Watch(b, profiles.All).Complete(r)
}

// Capability is the syncer as the manager starts it: gate
// ClusterProfileCredSyncer. Its teardown deletes every copy it made, which
// needs the right to list every Secret, so it runs only when the operator
// asks for cleanup.
func Capability(opts Options) capability.Capability {
	return capability.Capability{
		Name: "credential syncer",
		Gate: features.ClusterProfileCredSyncer,
		Requires: append([]schema.GroupVersionKind{clusterprofile.API,
			authv1beta1.GroupVersion.WithKind("ManagedServiceAccount")}, membership.APIs...),
		RequiresIf: opts.PublishedRequires,
		Indexes:    []fieldindex.Index{clusterprofile.NameIndex, membership.Index},
		Setup: func(ctx context.Context, mgr ctrl.Manager, gates capability.Gates) error {
			opts := opts
			opts.Gates = gates
			return Setup(ctx, mgr, opts)
		},
		Teardown: func(ctx context.Context, mgr ctrl.Manager) error {
			return Teardown(ctx, mgr, opts)
		},
		TeardownIsOptIn: true,
	}
}

// Teardown deletes every copy this syncer wrote, so that no token copy
// outlives the sync that keeps it current and revocable.
func Teardown(ctx context.Context, mgr ctrl.Manager, _ Options) error {
	deleted, err := deleteCopies(ctx, mgr.GetAPIReader(), mgr.GetClient())
	if deleted > 0 {
		ctrl.Log.WithName("credsync-teardown").Info("Deleted the synced token Secrets of the disabled syncer", "deleted", deleted)
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("not allowed to delete the token copies of the disabled syncer; grant list and delete on secrets "+
			"(chart value cleanupDisabledFeatures): %w", err)
	}
	return err
}

// deleteCopies deletes every copy this syncer wrote. reader must not be a cache.
func deleteCopies(ctx context.Context, reader client.Reader, writer client.Writer) (int, error) {
	return capability.EachListed(ctx, reader, &corev1.SecretList{}, func(ctx context.Context, obj client.Object) (bool, error) {
		secret := obj.(*corev1.Secret)
		if _, _, ours := cpcreds.CopySource(secret); !ours {
			return false, nil
		}
		err := client.IgnoreNotFound(writer.Delete(ctx, secret, client.Preconditions{UID: &secret.UID}))
		metrics.SyncedSecretWrite(metrics.OpDelete, err)
		if err != nil {
			return false, fmt.Errorf("deleting synced Secret %s/%s: %w", secret.Namespace, secret.Name, err)
		}
		return true, nil
	}, client.MatchingLabelsSelector{Selector: syncedCopies()})
}
