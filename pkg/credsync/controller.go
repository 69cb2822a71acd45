// Package credsync copies ManagedServiceAccount tokens next to the
// ClusterProfiles of their cluster, where consumers' cp-creds reads them.
//
// A copy exists exactly while its namespace serves its cluster (a Bound,
// publishing ManagedClusterSetBinding there selects it: pkg/membership), the
// namespace holds the hub's profile of that cluster, and the
// ManagedServiceAccount asks for sync and has a token. Unbinding a
// namespace, opting its binding out of publishing, deleting or unlabelling
// the ManagedServiceAccount, or deleting the profile revokes the copy at
// once, even while a profile lingers; a copy someone edited or deleted is
// repaired. A profile's labels grant nothing: a profile in a namespace that
// does not serve its cluster gets no token, whoever made it. Only Secrets
// carrying the managed-serviceaccount or synced-from labels are cached.
package credsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

// Reconciler keeps the synced token Secrets of one cluster in one namespace.
//
// Queue key: namespace (of the ClusterProfile and its copies) / cluster name,
// or the cluster's name for all its namespaces (namekeys: a start's burst, an
// event reaching many namespaces).
type Reconciler struct {
	// client reads profiles and ManagedServiceAccounts (the manager's cache)
	// and writes Secrets.
	client  client.Client
	members membership.Reader
	// tokens holds the agent's token Secrets, copies the synced copies.
	tokens, copies client.Reader
	// apiReader reads the API server itself: it settles the rare create
	// that finds the name taken, and confirms every removal.
	apiReader   client.Reader
	recorder    events.EventRecorder
	managerName string
	reports     *reportonce.Memory
	// blockers watches the Secrets that hold a name a copy needs.
	blockers *blockers
	// unscoped is where the tokens of ManagedServiceAccounts that name no
	// consumer namespaces go.
	unscoped UnscopedTokens
	// published are the entries whose servers the copies record; nil: none.
	published Published
	// upstream is managed-serviceaccount's own syncer, to which this one
	// yields while it is enabled; nil: not watched.
	upstream *coexistence.TwinWatch
	// created are the copies created that the copies cache does not show
	// yet: not created again meanwhile.
	created *cachelag.Creations
}

// Published are the access entries this bundle publishes for a cluster; the
// copies record their servers, and cp-creds sends a token to no other. The
// access providers implement it (accessprovider.Published), with the very
// functions that write the entries, so what a copy allows is what the hub
// publishes, not what a profile's status (which tenants may write) says.
type Published interface {
	// Entries are the entries published on profile, a profile the hub
	// publishes.
	Entries(ctx context.Context, profile *cpv1alpha1.ClusterProfile) ([]cpv1alpha1.AccessProvider, error)
	// Watch adds what changes the entries (a rotated CA, a new client
	// config) to the syncer's controller, mapped to profiles.
	Watch(b *builder.Builder, profiles membership.ProfileMapper) *builder.Builder
}

// Reconcile serves a namespace/cluster key, or a cluster's name key
// (namekeys) by serving each namespace that holds a profile of the cluster
// or a copy of its tokens.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	written, confirmed := &liveTokens{reader: r.apiReader, opts: anyVersion}, &liveTokens{reader: r.apiReader}
	return namekeys.Each(ctx, req, r.namespacesOf, func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		return r.reconcileNamespace(ctx, req, written, confirmed)
	})
}

// namespacesOf are the keys of cluster: every namespace with a profile of
// that name or a copy of its tokens (which may have to go).
func (r *Reconciler) namespacesOf(ctx context.Context, cluster string) ([]types.NamespacedName, error) {
	profiles, err := clusterprofile.Named(ctx, r.client, cluster)
	if err != nil {
		return nil, err
	}
	copies := &corev1.SecretList{}
	if err := r.copies.List(ctx, copies, client.MatchingFields{IndexCopyOf: cluster}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing synced Secrets of %s: %w", cluster, err)
	}
	namespaces := sets.New[string]()
	for _, key := range profiles {
		namespaces.Insert(key.Namespace)
	}
	for i := range copies.Items {
		namespaces.Insert(copies.Items[i].Namespace)
	}
	keys := make([]types.NamespacedName, 0, namespaces.Len())
	for _, namespace := range sets.List(namespaces) {
		keys = append(keys, types.NamespacedName{Namespace: namespace, Name: cluster})
	}
	return keys, nil
}

// reconcileNamespace brings one namespace's copies for one cluster in line. While
// managed-serviceaccount's own syncer writes the copies, it creates and
// changes none of them, only its own marks on that syncer's copies
// (reconcileMarks). Either way it deletes every copy of the cluster's tokens
// that this bundle's rules do not allow in the namespace, whoever wrote it:
// revocation never yields.
func (r *Reconciler) reconcileNamespace(ctx context.Context, req ctrl.Request, written, confirmed *liveTokens) (ctrl.Result, error) {
	namespace, cluster := req.Namespace, req.Name
	profile, sources, err := r.world(ctx, r.cached(), namespace, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	yielding, err := r.upstream.Yielding(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	rules := Rules{Unscoped: r.unscoped}
	if profile != nil {
		if rules.Servers, err = r.publishedServers(ctx, profile); err != nil {
			return ctrl.Result{}, err
		}
		r.reportInvalidNames(ctx, cluster, sources)
		r.reportScopes(ctx, cluster, sources)
	}
	p, err := r.plan(ctx, namespace, cluster, profile, sources, rules, yielding)
	if err == nil && p.writesTokens() {
		// Planned on the tokens' digests; written with the tokens.
		if sources, err = r.sources(ctx, view{objects: r.client, tokens: written.get}, cluster); err == nil {
			p, err = r.plan(ctx, namespace, cluster, profile, sources, rules, yielding)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	desired, existing := p.desired, p.existing
	for _, c := range existing {
		r.created.Seen(c.Namespace + "/" + c.Name)
	}
	steps, err := r.confirmRemovals(ctx, namespace, cluster, p.steps, confirmed)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(steps) == 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Synced Secrets up to date")
	}
	wait, err := r.execute(ctx, namespace, cluster, sources, steps)
	if yielding {
		err = errors.Join(err, r.reconcileMarks(ctx, profile, desired, existing))
	}
	if err == nil && wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return clusterprofile.ResultFor(ctx, err)
}

// copyPlan is what one namespace's copies of one cluster's tokens need.
type copyPlan struct {
	desired, existing []*corev1.Secret
	steps             []copyStep
}

// plan reads the copies there are and plans the writes to the desired ones.
func (r *Reconciler) plan(ctx context.Context, namespace, cluster string, profile *cpv1alpha1.ClusterProfile, sources []Source,
	rules Rules, yielding bool) (copyPlan, error) {
	desired := DesiredCopies(profile, cluster, sources, rules)
	existing, err := r.existingCopies(ctx, namespace, cluster, desired)
	if err != nil {
		return copyPlan{}, err
	}
	return copyPlan{desired: desired, existing: existing, steps: planCopies(cluster, desired, existing, yielding)}, nil
}

// writesTokens tells whether a step writes a copy built from the tokens
// cache, which holds the tokens' digests only.
func (p copyPlan) writesTokens() bool {
	return slices.ContainsFunc(p.steps, func(s copyStep) bool {
		return (s.create != nil && secretdigest.Digested(s.create)) || (s.apply != nil && secretdigest.Digested(s.apply))
	})
}

// view is where a reconcile reads the world from.
type view struct {
	// objects serves profiles, ManagedServiceAccounts and what membership
	// reads.
	objects client.Reader
	// tokens reads the agent's token Secrets (nil: none of the name).
	tokens func(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error)
}

// cached reads the manager's caches, as every reconcile does; the tokens
// cache holds digests.
func (r *Reconciler) cached() view {
	return view{objects: r.client, tokens: func(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
		return optional.Get(ctx, r.tokens, key, &corev1.Secret{})
	}}
}

// liveTokens reads token Secrets from the API server, each once per
// Reconcile: a cluster's name key serves all of its namespaces, and each
// that writes a copy needs the tokens themselves.
type liveTokens struct {
	reader client.Reader
	// opts are anyVersion for the tokens a copy is written with, and none
	// (a read from etcd) for those that confirm a removal.
	opts []client.GetOption
	read map[types.NamespacedName]*corev1.Secret
}

// anyVersion reads from the API server's watch cache, which is at least as
// fresh as the tokens cache the copies were planned on (its watch feeds
// it), without a read from etcd for each copy of a cold start. A copy
// written from an API server that lags another is planned again when it
// shows in the copies cache.
var anyVersion = []client.GetOption{&client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}}

func (l *liveTokens) get(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	if token, ok := l.read[key]; ok {
		return token, nil
	}
	token, err := optional.Get(ctx, l.reader, key, &corev1.Secret{}, l.opts...)
	if err != nil {
		return nil, err
	}
	if l.read == nil {
		l.read = map[types.NamespacedName]*corev1.Secret{}
	}
	l.read[key] = token
	return token, nil
}

// world reads what decides the copies of cluster in namespace: the hub's
// profile of the cluster there (nil unless the namespace serves it; see
// membership.Reader.ServesProfile) and, with a profile, the cluster's
// sources.
func (r *Reconciler) world(ctx context.Context, v view, namespace, cluster string) (*cpv1alpha1.ClusterProfile, []Source, error) {
	profile, err := optional.Get(ctx, v.objects, types.NamespacedName{Namespace: namespace, Name: cluster}, &cpv1alpha1.ClusterProfile{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading ClusterProfile %s/%s: %w", namespace, cluster, err)
	}
	served, err := membership.Reader{Client: v.objects}.ServesProfile(ctx, profile, r.managerName)
	if err != nil || !served {
		return nil, nil, err
	}
	sources, err := r.sources(ctx, v, cluster)
	return profile, sources, err
}

// confirmRemovals keeps only the removals the API server agrees with. Each
// cache has its own watch, so the copies cache can show a copy before the
// others show what made it wanted (its profile, a binding turned Bound, a
// new ManagedServiceAccount): managed-serviceaccount's syncer, or this one
// on a peer's cache, made it from a fresher view. As Kubernetes' garbage
// collector looks an owner up before it deletes a dependant, the syncer
// deletes only a copy the live hub does not want either; a copy kept here
// is reconciled again when the event that explains it reaches the cache.
func (r *Reconciler) confirmRemovals(ctx context.Context, namespace, cluster string, steps []copyStep, confirmed *liveTokens) ([]copyStep, error) {
	if !slices.ContainsFunc(steps, func(s copyStep) bool { return s.remove != nil }) {
		return steps, nil
	}
	profile, sources, err := r.world(ctx, view{objects: r.apiReader, tokens: confirmed.get}, namespace, cluster)
	if err != nil {
		return nil, fmt.Errorf("confirming the removal of copies of %s in %s: %w", cluster, namespace, err)
	}
	wanted := sets.New[string]()
	if profile != nil {
		for _, c := range DesiredCopies(profile, cluster, sources, Rules{Unscoped: r.unscoped}) {
			wanted.Insert(c.Name)
		}
	}
	gone, err := r.goneLive(ctx, steps)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(steps, func(s copyStep) bool {
		if s.remove == nil {
			return false
		}
		if wanted.Has(s.remove.Name) {
			ctrl.LoggerFrom(ctx).V(2).Info("Keeping a synced token Secret the caches do not explain yet: the API server still wants it",
				"secret", klog.KObj(s.remove))
			return true
		}
		return gone.Has(s.remove.Name)
	}), nil
}

// goneLive names the copies to remove that the API server no longer has
// (an earlier reconcile deleted them, and the copies cache has not seen it
// yet): deleting one again would only fetch a 404.
func (r *Reconciler) goneLive(ctx context.Context, steps []copyStep) (sets.Set[string], error) {
	gone := sets.New[string]()
	for _, s := range steps {
		if s.remove == nil {
			continue
		}
		live, err := optional.Get(ctx, r.apiReader, client.ObjectKeyFromObject(s.remove), &corev1.Secret{})
		if err != nil {
			return nil, fmt.Errorf("reading synced Secret %s/%s: %w", s.remove.Namespace, s.remove.Name, err)
		}
		if live == nil || live.UID != s.remove.UID {
			gone.Insert(s.remove.Name)
		}
	}
	return gone, nil
}

// sources are the cluster's ManagedServiceAccounts that ask for sync, with
// their token Secrets: only a Secret labelled as the agent's token, which
// is all the tokens cache holds.
func (r *Reconciler) sources(ctx context.Context, v view, cluster string) ([]Source, error) {
	msas := &authv1beta1.ManagedServiceAccountList{}
	if err := v.objects.List(ctx, msas, client.InNamespace(cluster),
		client.MatchingLabels{LabelSyncToClusterProfile: "true"}); err != nil {
		return nil, fmt.Errorf("listing ManagedServiceAccounts of %s: %w", cluster, err)
	}
	sources := make([]Source, 0, len(msas.Items))
	for i := range msas.Items {
		msa := &msas.Items[i]
		s := Source{MSA: msa}
		if msa.DeletionTimestamp.IsZero() && msa.Status.TokenSecretRef != nil {
			token, err := v.tokens(ctx, types.NamespacedName{Namespace: cluster, Name: msa.Status.TokenSecretRef.Name})
			if err != nil {
				return nil, fmt.Errorf("reading the token Secret of ManagedServiceAccount %s/%s: %w", cluster, msa.Name, err)
			}
			if token != nil && token.Labels[LabelIsManagedServiceAccount] == "true" {
				s.Token = token
			}
		}
		sources = append(sources, s)
	}
	return sources, nil
}

// publishedServers are the servers of the entries the hub publishes on
// profile.
func (r *Reconciler) publishedServers(ctx context.Context, profile *cpv1alpha1.ClusterProfile) ([]cpcreds.PublishedServer, error) {
	if r.published == nil {
		return nil, nil
	}
	entries, err := r.published.Entries(ctx, profile)
	if err != nil {
		return nil, err
	}
	servers := make([]cpcreds.PublishedServer, 0, len(entries))
	for _, e := range entries {
		servers = append(servers, cpcreds.ServerOf(e.Cluster))
	}
	return servers, nil
}

// existingCopies returns the copies of cluster's tokens in namespace
// (this syncer's, and managed-serviceaccount's own syncer's: IndexCopy) and
// whatever copy holds a name one of desired needs (another pair's, whose
// names join into the same Secret name), read from the copies cache.
func (r *Reconciler) existingCopies(ctx context.Context, namespace, cluster string, desired []*corev1.Secret) ([]*corev1.Secret, error) {
	list := &corev1.SecretList{}
	// The cluster's copies in every namespace, shared with the cache: only
	// those in namespace are copied.
	if err := r.copies.List(ctx, list, client.MatchingFields{IndexCopyOf: cluster}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing synced Secrets of %s in %s: %w", cluster, namespace, err)
	}
	out := make([]*corev1.Secret, 0, len(desired))
	seen := sets.New[string]()
	for i := range list.Items {
		if list.Items[i].Namespace != namespace {
			continue
		}
		out = append(out, list.Items[i].DeepCopy())
		seen.Insert(list.Items[i].Name)
	}
	for _, want := range desired {
		if seen.Has(want.Name) {
			continue
		}
		holder, err := optional.Get(ctx, r.copies, client.ObjectKeyFromObject(want), &corev1.Secret{})
		if err != nil {
			return nil, fmt.Errorf("reading synced Secret %s/%s: %w", want.Namespace, want.Name, err)
		}
		if holder != nil {
			out = append(out, holder)
		}
	}
	return out, nil
}

// execute carries out the steps; one failing copy does not stop the others.
// The names still held by another Secret afterwards are watched, so the copy
// is made when the holder goes. A copy just created that the cache does not
// show yet is not created again: execute returns how long to wait for it.
func (r *Reconciler) execute(ctx context.Context, namespace, cluster string, sources []Source, steps []copyStep) (time.Duration, error) {
	var errs []error
	var wait time.Duration
	findings := map[string]string{}
	defer func() { r.blockers.Set(namespace, cluster, sets.List(sets.KeySet(findings))) }()
	for _, s := range steps {
		log := ctrl.LoggerFrom(ctx).WithValues("secret", klog.KRef(r.namespaceOf(s), s.name()))
		var err error
		switch {
		case s.collision != nil:
			findings[s.name()] = describeHolder(s.collision.holder)
		case s.create != nil:
			// Reserved before it is sent: the cluster's name key and this
			// namespace's key can run at once.
			if w := r.created.Reserve(s.create.Namespace + "/" + s.create.Name); w > 0 {
				log.V(4).Info("Waiting for the cache to show the synced token Secret just created", "wait", w)
				if wait == 0 || w < wait {
					wait = w
				}
				continue
			}
			log.V(2).Info("Creating synced token Secret")
			err = r.create(ctx, s.create, findings)
		case s.apply != nil:
			log.V(2).Info("Updating synced token Secret", "takingOver", s.releaseMarks)
			err = r.apply(ctx, s.apply, metrics.OpUpdate)
			if err == nil && s.releaseMarks {
				err = r.releaseMarks(ctx, s.apply)
			}
		case s.remove != nil:
			upstream := writtenByAnother(s.remove)
			log.V(2).Info("Deleting synced token Secret that is no longer wanted", "writtenByAnotherSyncer", upstream)
			if err = r.remove(ctx, s.remove); err == nil && upstream {
				r.reportRevokedUpstreamCopy(ctx, s.remove)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	r.reportCollisions(ctx, namespace+"/"+cluster, sources, steps, findings)
	return wait, errors.Join(errs...)
}

func (r *Reconciler) namespaceOf(s copyStep) string {
	switch {
	case s.create != nil:
		return s.create.Namespace
	case s.apply != nil:
		return s.apply.Namespace
	case s.remove != nil:
		return s.remove.Namespace
	}
	return s.collision.want.Namespace
}

// create makes a copy. When the name turns out to be taken, the holder is
// read from the API server: a copy of ours the cache has not seen yet is
// brought in line; anything else is a collision, never overwritten.
func (r *Reconciler) create(ctx context.Context, want *corev1.Secret, findings map[string]string) error {
	if err := writable(want); err != nil {
		r.created.Seen(want.Namespace + "/" + want.Name)
		return err
	}
	err := r.client.Create(ctx, want.DeepCopy(), client.FieldOwner(FieldManager))
	metrics.SyncedSecretWrite(metrics.OpCreate, client.IgnoreAlreadyExists(err))
	if err != nil {
		// Not created by this reconcile (failed, or the name is taken):
		// the next one may try again at once, as when the name is freed.
		r.created.Seen(want.Namespace + "/" + want.Name)
	}
	if !apierrors.IsAlreadyExists(err) {
		return wrap(err, "creating", want)
	}
	holder := &corev1.Secret{}
	err = r.apiReader.Get(ctx, client.ObjectKeyFromObject(want), holder)
	if apierrors.IsNotFound(err) {
		// Freed between the create and the read: try again (with backoff).
		return fmt.Errorf("synced Secret %s/%s: the name was taken and is free again; retrying", want.Namespace, want.Name)
	}
	if err != nil {
		return wrap(err, "reading", want)
	}
	if !sameSource(holder, want) {
		findings[want.Name] = describeHolder(holder)
		return nil
	}
	if CopyUpToDate(holder, want) {
		return nil
	}
	if err := r.apply(ctx, want, metrics.OpUpdate); err != nil {
		return err
	}
	if _, marked := holder.Annotations[cpcreds.AnnotationUpstreamCopy]; marked {
		return r.releaseMarks(ctx, want)
	}
	return nil
}

// apply writes the syncer's fields of an existing copy with Server-Side
// Apply, taking them back from whoever edited them.
func (r *Reconciler) apply(ctx context.Context, want *corev1.Secret, op string) error {
	if err := writable(want); err != nil {
		return err
	}
	ref := want.OwnerReferences[0]
	ac := corev1ac.Secret(want.Name, want.Namespace).
		WithType(want.Type).WithData(want.Data).WithLabels(want.Labels).WithAnnotations(want.Annotations).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).
			WithName(ref.Name).WithUID(ref.UID).WithBlockOwnerDeletion(false))
	err := ssa.Apply(ctx, r.client, want.DeepCopy(), ac, FieldManager)
	metrics.SyncedSecretWrite(op, err)
	return wrap(err, "applying", want)
}

// releaseMarks gives up what MarksFieldManager owns on a copy this syncer
// now writes itself: the marks it put there while it yielded, the upstream
// mark among them (the others are the syncer's own fields by now).
func (r *Reconciler) releaseMarks(ctx context.Context, want *corev1.Secret) error {
	err := ssa.Apply(ctx, r.client, want.DeepCopy(), corev1ac.Secret(want.Name, want.Namespace), MarksFieldManager)
	metrics.SyncedSecretWrite(metrics.OpUpdate, err)
	return wrap(err, "releasing the marks of", want)
}

func (r *Reconciler) remove(ctx context.Context, secret *corev1.Secret) error {
	err := r.client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	metrics.SyncedSecretWrite(metrics.OpDelete, client.IgnoreNotFound(err))
	return wrap(client.IgnoreNotFound(err), "deleting", secret)
}

// writable refuses a copy built from the tokens cache: its data are the
// tokens' digests.
func writable(want *corev1.Secret) error {
	if secretdigest.Digested(want) {
		return fmt.Errorf("synced Secret %s/%s: built from the tokens' digests, not written", want.Namespace, want.Name)
	}
	return nil
}

func wrap(err error, verb string, s *corev1.Secret) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s synced Secret %s/%s: %w", verb, s.Namespace, s.Name, err)
}

func describeHolder(holder *corev1.Secret) string {
	if cluster, msa, ok := cpcreds.CopySource(holder); ok {
		return fmt.Sprintf("the token of cluster %q and ManagedServiceAccount %q", cluster, msa)
	}
	return "a Secret that is not a synced token"
}
