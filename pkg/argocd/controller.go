// Package argocd keeps, for every ClusterProfile the hub publishes in Argo
// CD's namespace, one of Argo CD's declarative cluster Secrets that reaches
// the cluster through an access entry the hub publishes, with cp-creds as
// its exec plugin: Argo CD then deploys to every managed cluster bound into
// its namespace, and ApplicationSet's generators see them, with no token in
// any Secret Argo CD reads.
package argocd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

// Entries are the access entries the hub publishes for a profile: what the
// access providers write (pkg/accessprovider's Published, wired by the
// manager), not what a profile's status says.
type Entries interface {
	Entries(ctx context.Context, profile *cpv1alpha1.ClusterProfile) ([]cpv1alpha1.AccessProvider, error)
	Watch(b *builder.Builder, profiles membership.ProfileMapper) *builder.Builder
}

// Reconciler keeps one cluster Secret per published profile in Argo CD's
// namespace.
//
// Queue key: ClusterProfile namespace/name; only keys in Argo CD's
// namespace are acted on. The Secret is named cluster-<name>. Membership,
// entry and Secret events map to it.
type Reconciler struct {
	// client reads profiles and membership through the cache, and writes.
	client client.Client
	// secrets reads our cluster Secrets (labelled LabelCreatedBy) in Argo
	// CD's namespace; names the metadata of every Secret there, to see a
	// name another Secret holds; apiReader reads managedFields before a
	// write.
	secrets, names, apiReader client.Reader
	entries                   Entries
	recorder                  events.EventRecorder
	clock                     clock.PassiveClock
	settings                  Settings
	reports                   *reportonce.Memory
	// created are the Secrets created that the cache does not show yet:
	// not created again meanwhile.
	created *cachelag.Creations
}

// Reconcile brings one profile's cluster Secret in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Namespace != r.settings.Namespace {
		return ctrl.Result{}, nil
	}
	profile, served, err := r.profile(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	entry, err := r.entry(ctx, profile, served)
	if err != nil {
		return ctrl.Result{}, err
	}
	desired, err := DesiredSecret(profile, served, entry, r.settings)
	if err != nil {
		return ctrl.Result{}, err
	}
	current, taken, err := r.existing(ctx, types.NamespacedName{Namespace: req.Namespace, Name: SecretName(req.Name)})
	if err != nil {
		return ctrl.Result{}, err
	}
	if current != nil {
		r.created.Seen(current.Name)
	}
	act := plan(current, taken, desired)
	r.report(ctx, req, profile, served && entry == nil, act)
	switch act {
	case actionCreate:
		return r.create(ctx, profile, desired)
	case actionApply:
		return ctrl.Result{}, r.apply(ctx, desired)
	case actionDelete:
		return ctrl.Result{}, r.delete(ctx, current)
	}
	ctrl.LoggerFrom(ctx).V(4).Info("Argo CD cluster Secret up to date", "action", act.String())
	return ctrl.Result{}, nil
}

// profile returns the profile (nil when gone) and whether the hub
// publishes it in its namespace: ours, named after a cluster the namespace
// serves. Its labels do not count.
func (r *Reconciler) profile(ctx context.Context, key types.NamespacedName) (*cpv1alpha1.ClusterProfile, bool, error) {
	profile, err := optional.Get(ctx, r.client, key, &cpv1alpha1.ClusterProfile{})
	if err != nil || profile == nil {
		return nil, false, wrapf(err, "reading ClusterProfile %s", key)
	}
	served, err := membership.Reader{Client: r.client}.ServesProfile(ctx, profile, r.settings.ManagerName)
	return profile, served, err
}

// entry is the entry named Settings.AccessProvider that the hub publishes
// for profile; nil when none is (its provider off or waiting).
func (r *Reconciler) entry(ctx context.Context, profile *cpv1alpha1.ClusterProfile, served bool) (*cpv1alpha1.AccessProvider, error) {
	if !served || r.entries == nil {
		return nil, nil
	}
	entries, err := r.entries.Entries(ctx, profile)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if entries[i].Name == r.settings.AccessProvider {
			return &entries[i], nil
		}
	}
	return nil, nil
}

// existing returns our Secret of the name (nil: none) and whether any
// other Secret holds the name. One that carries our label is not counted
// (the names cache leaves it out): it is ours while the cache of our
// Secrets catches up with the other (each has its own watch), and a forged
// one shows in that cache too, where apply finds it is not ours.
func (r *Reconciler) existing(ctx context.Context, key types.NamespacedName) (*corev1.Secret, bool, error) {
	current, err := optional.Get(ctx, r.secrets, key, &corev1.Secret{})
	if err != nil {
		return nil, false, wrapf(err, "reading Secret %s", key)
	}
	holder, err := optional.Get(ctx, r.names, key, secretMetadata())
	if err != nil {
		return nil, false, wrapf(err, "reading Secret %s", key)
	}
	return current, current == nil && holder != nil, nil
}

// create makes the Secret once the profile has its properties, unless it
// was just created and the cache does not show it yet. A Secret of the name
// that appeared meanwhile fails the create; its event brings the profile
// back.
func (r *Reconciler) create(ctx context.Context, profile *cpv1alpha1.ClusterProfile, want *corev1.Secret) (ctrl.Result, error) {
	if wait := awaitProperties(profile, r.clock.Now()); wait > 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the profile's properties before creating its Argo CD cluster Secret", "wait", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if wait := r.created.Wait(want.Name); wait > 0 {
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the cache to show the Argo CD cluster Secret just created", "wait", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	key := client.ObjectKeyFromObject(want)
	ctrl.LoggerFrom(ctx).V(2).Info("Creating Argo CD cluster Secret", "secret", key)
	if err := r.client.Create(ctx, want.DeepCopy(), client.FieldOwner(FieldManager)); err != nil {
		return ctrl.Result{}, wrapf(client.IgnoreAlreadyExists(err), "creating Secret %s", key)
	}
	r.created.Created(want.Name)
	return ctrl.Result{}, nil
}

// apply brings our Secret in line, after checking on the API server that
// we wrote it: the label, which the cache shows, is anyone's to set.
func (r *Reconciler) apply(ctx context.Context, want *corev1.Secret) error {
	if ours, err := r.ours(ctx, client.ObjectKeyFromObject(want)); err != nil || ours == nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Updating Argo CD cluster Secret", "secret", client.ObjectKeyFromObject(want))
	ref := want.OwnerReferences[0]
	ac := corev1ac.Secret(want.Name, want.Namespace).WithType(want.Type).WithLabels(want.Labels).WithData(want.Data).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).
			WithName(ref.Name).WithUID(ref.UID).WithBlockOwnerDeletion(false))
	return wrapf(ssa.Apply(ctx, r.client, want.DeepCopy(), ac, FieldManager), "applying Secret %s", client.ObjectKeyFromObject(want))
}

// delete deletes our Secret, if it is still ours and the object read.
func (r *Reconciler) delete(ctx context.Context, current *corev1.Secret) error {
	live, err := r.ours(ctx, client.ObjectKeyFromObject(current))
	if err != nil || live == nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleting Argo CD cluster Secret that is no longer wanted", "secret", client.ObjectKeyFromObject(live))
	err = r.client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.UID), ResourceVersion: ptr.To(live.ResourceVersion)})
	return wrapf(client.IgnoreNotFound(err), "deleting Secret %s", client.ObjectKeyFromObject(live))
}

// ours reads the Secret from the API server; nil unless it is ours: our
// label, and our field manager wrote it.
func (r *Reconciler) ours(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	live, err := optional.Get(ctx, r.apiReader, key, &corev1.Secret{})
	if err != nil || live == nil {
		return nil, wrapf(err, "reading Secret %s", key)
	}
	if !Ours(live, r.settings.ManagerName) {
		ctrl.LoggerFrom(ctx).Info("Leaving alone a Secret that carries our label but that we did not write", "secret", key)
		return nil, nil
	}
	return live, nil
}

// Ours tells whether s (read with managedFields) is a cluster Secret this
// capability wrote for managerName: our label and our field manager.
func Ours(s *corev1.Secret, managerName string) bool {
	return s.Labels[LabelCreatedBy] == managerName && fieldmanager.WrittenBy(s, FieldManager)
}

// secretMetadata is an empty Secret, metadata only.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
