// Package credsync copies ManagedServiceAccount tokens next to the
// ClusterProfiles of their cluster, where consumers' cp-creds reads them.
//
// A copy exists exactly while its namespace holds a profile of that cluster
// and the ManagedServiceAccount asks for sync and has a token: unbinding a
// namespace, deleting or unlabelling the ManagedServiceAccount, or deleting
// the profile revokes the copy at once, and a copy someone edited or deleted
// is repaired. Only Secrets carrying the managed-serviceaccount or
// synced-from labels are cached.
package credsync

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
)

// Reconciler keeps the synced token Secrets of one cluster in one namespace.
//
// Queue key: namespace (of the ClusterProfile and its copies) / cluster name.
type Reconciler struct {
	// client reads profiles and ManagedServiceAccounts (the manager's cache)
	// and writes Secrets.
	client client.Client
	// tokens holds the agent's token Secrets, copies the synced copies.
	tokens, copies client.Reader
	// apiReader settles the rare create that finds the name taken.
	apiReader   client.Reader
	recorder    events.EventRecorder
	managerName string
	reports     *reportonce.Memory
}

// Reconcile brings one namespace's copies for one cluster in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	namespace, cluster := req.Namespace, req.Name
	profile, err := r.profile(ctx, namespace, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	var sources []Source
	if profile != nil {
		if sources, err = r.sources(ctx, cluster); err != nil {
			return ctrl.Result{}, err
		}
	}
	inNamespace, err := r.copiesIn(ctx, namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	steps := planCopies(cluster, DesiredCopies(profile, cluster, sources), inNamespace)
	if len(steps) == 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Synced Secrets up to date")
	}
	return clusterprofile.ResultFor(ctx, r.execute(ctx, req.String(), sources, steps))
}

// profile returns the namespace's profile of cluster, nil when there is none
// the syncer serves (gone, another manager's, being deleted).
func (r *Reconciler) profile(ctx context.Context, namespace, cluster string) (*cpv1alpha1.ClusterProfile, error) {
	list := &cpv1alpha1.ClusterProfileList{}
	if err := r.client.List(ctx, list, client.InNamespace(namespace),
		client.MatchingFields{clusterprofile.IndexByCluster: cluster}); err != nil {
		return nil, fmt.Errorf("listing ClusterProfiles of %s in %s: %w", cluster, namespace, err)
	}
	for i := range list.Items {
		if clusterprofile.ClusterOf(&list.Items[i], r.managerName) == cluster {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// sources are the cluster's ManagedServiceAccounts that ask for sync, with
// their token Secrets.
func (r *Reconciler) sources(ctx context.Context, cluster string) ([]Source, error) {
	msas := &authv1beta1.ManagedServiceAccountList{}
	if err := r.client.List(ctx, msas, client.InNamespace(cluster),
		client.MatchingLabels{LabelSyncToClusterProfile: "true"}); err != nil {
		return nil, fmt.Errorf("listing ManagedServiceAccounts of %s: %w", cluster, err)
	}
	sources := make([]Source, 0, len(msas.Items))
	for i := range msas.Items {
		msa := &msas.Items[i]
		s := Source{MSA: msa}
		if msa.DeletionTimestamp.IsZero() && msa.Status.TokenSecretRef != nil {
			token := &corev1.Secret{}
			err := r.tokens.Get(ctx, types.NamespacedName{Namespace: cluster, Name: msa.Status.TokenSecretRef.Name}, token)
			switch {
			case err == nil:
				s.Token = token
			case !apierrors.IsNotFound(err):
				return nil, fmt.Errorf("reading the token Secret of ManagedServiceAccount %s/%s: %w", cluster, msa.Name, err)
			}
		}
		sources = append(sources, s)
	}
	return sources, nil
}

func (r *Reconciler) copiesIn(ctx context.Context, namespace string) ([]*corev1.Secret, error) {
	list := &corev1.SecretList{}
	if err := r.copies.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing synced Secrets in %s: %w", namespace, err)
	}
	out := make([]*corev1.Secret, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// execute carries out the steps; one failing copy does not stop the others.
func (r *Reconciler) execute(ctx context.Context, subject string, sources []Source, steps []copyStep) error {
	var errs []error
	findings := map[string]string{}
	for _, s := range steps {
		log := ctrl.LoggerFrom(ctx).WithValues("secret", klog.KRef(r.namespaceOf(s), s.name()))
		var err error
		switch {
		case s.collision != nil:
			findings[s.name()] = describeHolder(s.collision.holder)
		case s.create != nil:
			log.V(2).Info("Creating synced token Secret")
			err = r.create(ctx, s.create, findings)
		case s.apply != nil:
			log.V(2).Info("Updating synced token Secret")
			err = r.apply(ctx, s.apply, metrics.OpUpdate)
		case s.remove != nil:
			log.V(2).Info("Deleting synced token Secret that is no longer wanted")
			err = r.remove(ctx, s.remove)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	r.reportCollisions(ctx, subject, sources, steps, findings)
	return errors.Join(errs...)
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
	err := r.client.Create(ctx, want.DeepCopy(), client.FieldOwner(FieldManager))
	metrics.SyncedSecretWrite(metrics.OpCreate, client.IgnoreAlreadyExists(err))
	if !apierrors.IsAlreadyExists(err) {
		return wrap(err, "creating", want)
	}
	holder := &corev1.Secret{}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(want), holder); err != nil {
		return wrap(client.IgnoreNotFound(err), "reading", want)
	}
	if !sameSource(holder, want) {
		findings[want.Name] = describeHolder(holder)
		return nil
	}
	if CopyUpToDate(holder, want) {
		return nil
	}
	return r.apply(ctx, want, metrics.OpUpdate)
}

// apply writes the syncer's fields of an existing copy with Server-Side
// Apply, taking them back from whoever edited them.
func (r *Reconciler) apply(ctx context.Context, want *corev1.Secret, op string) error {
	ref := want.OwnerReferences[0]
	ac := corev1ac.Secret(want.Name, want.Namespace).
		WithType(want.Type).WithData(want.Data).WithLabels(want.Labels).WithAnnotations(want.Annotations).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).
			WithName(ref.Name).WithUID(ref.UID).WithBlockOwnerDeletion(false))
	err := r.client.Apply(ctx, ac, client.FieldOwner(FieldManager), client.ForceOwnership)
	metrics.SyncedSecretWrite(op, err)
	return wrap(err, "applying", want)
}

func (r *Reconciler) remove(ctx context.Context, secret *corev1.Secret) error {
	err := r.client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	metrics.SyncedSecretWrite(metrics.OpDelete, client.IgnoreNotFound(err))
	return wrap(client.IgnoreNotFound(err), "deleting", secret)
}

func wrap(err error, verb string, s *corev1.Secret) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s synced Secret %s/%s: %w", verb, s.Namespace, s.Name, err)
}

func describeHolder(holder *corev1.Secret) string {
	if cluster, msa, ok := SourceOf(holder); ok {
		return fmt.Sprintf("the token of cluster %q and ManagedServiceAccount %q", cluster, msa)
	}
	return "a Secret that is not a synced token"
}
