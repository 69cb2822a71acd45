package argocd

import (
	"fmt"

	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/intern"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

// Options configure the capability.
type Options struct {
	Settings
	// Entries builds, on the manager, the entries the hub publishes, those
	// of the access providers gates turn on; nil publishes none, and no
	// cluster Secret is written.
	Entries func(mgr ctrl.Manager, gates capability.Gates) (Entries, error)
	// EntriesRequire are the APIs Entries reads while a gate is on.
	EntriesRequire map[featuregate.Feature][]schema.GroupVersionKind
	// Gates are the runner's, for Entries (the Capability sets them).
	Gates capability.Gates
}

// Capability is the Argo CD integration as the manager starts it: gate
// ClusterProfileArgoCD. It has no teardown: its rights live in Argo CD's
// namespace only while the gate is on (a Role there), and the cluster
// Secrets it leaves behind hold no credential; the docs say how to delete
// them.
func Capability(opts Options) capability.Capability {
	opts.Settings = opts.Settings.WithDefaults()
	return capability.Capability{
		Name:       "Argo CD integration",
		Gate:       features.ClusterProfileArgoCD,
		Requires:   append([]schema.GroupVersionKind{clusterprofile.API}, membership.APIs...),
		RequiresIf: opts.EntriesRequire,
		Indexes:    []fieldindex.Index{clusterprofile.NameIndex, membership.Index},
		Setup: func(ctx context.Context, mgr ctrl.Manager, gates capability.Gates) error {
			opts := opts
			opts.Gates = gates
			return Setup(ctx, mgr, opts)
		},
	}
}

// Setup registers the controller. Its Secret caches hold Argo CD's
// namespace only: our cluster Secrets with digests of their data (all the
// controller does with it is compare), and every other Secret's name (to
// leave alone one that holds a name we would write).
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	inNamespace := map[string]cache.Config{opts.Namespace: {}}
	secrets, err := filteredcache.New(mgr, &corev1.Secret{}, cache.ByObject{Namespaces: inNamespace,
		Label: labels.SelectorFromSet(labels.Set{LabelCreatedBy: opts.ManagerName}), Transform: secretdigest.Transform()})
	if err != nil {
		return err
	}
	others, err := notLabelledOurs(opts.ManagerName)
	if err != nil {
		return err
	}
	names, err := filteredcache.New(mgr, secretMetadata(), cache.ByObject{Namespaces: inNamespace, Label: others, Transform: nameOnly})
	if err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), secrets: secrets, names: names, apiReader: mgr.GetAPIReader(),
		recorder: eventnote.Truncating(mgr.GetEventRecorder(ControllerName)), clock: clock.RealClock{}, settings: opts.Settings, reports: reportonce.New(),
		created: cachelag.New(clock.RealClock{})}
	if opts.Entries != nil {
		if r.entries, err = opts.Entries(mgr, opts.Gates); err != nil {
			return err
		}
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&cpv1alpha1.ClusterProfile{}, builder.WithPredicates(predicate.NewPredicateFuncs(r.inArgoCDNamespace))).
		WatchesRawSource(source.Kind[client.Object](secrets, &corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.profileOfSecret))).
		WatchesRawSource(source.Kind[client.Object](names, secretMetadata(), handler.EnqueueRequestsFromMapFunc(r.profileHoldingName)))
	profiles := membership.ProfileMapper{Client: mgr.GetClient(), Namespace: opts.Namespace}
	b = profiles.Watch(b)
	if r.entries != nil {
		b = r.entries.Watch(b, profiles)
	}
	return b.Complete(r)
}

// notLabelledOurs selects the Secrets that do not carry our label (those
// that do are in the cache of our Secrets, forged or not).
func notLabelledOurs(managerName string) (labels.Selector, error) {
	req, err := labels.NewRequirement(LabelCreatedBy, selection.NotEquals, []string{managerName})
	if err != nil {
		return nil, fmt.Errorf("the cluster manager's name %q as a label value: %w", managerName, err)
	}
	return labels.NewSelector().Add(*req), nil
}

// nameOnly keeps of a Secret's metadata what the names cache is read for:
// that a Secret holds the name. Argo CD's namespace may hold thousands of
// other Secrets (token copies among them), each with its own labels and
// annotations.
func nameOnly(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: intern.String(m.Namespace), UID: m.UID,
		ResourceVersion: m.ResourceVersion, DeletionTimestamp: m.DeletionTimestamp}
	return m, nil
}
