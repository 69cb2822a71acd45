package mirror

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
)

// Options configure the mirror.
type Options struct {
	// ManagerName is the cluster manager name written on every profile.
	ManagerName string
	// Workers is the number of clusters reconciled in parallel.
	Workers int
	// Guard keeps the mirror passive while OCM's built-in mirror is on
	// (coexistence.NewGuard when nil).
	Guard *coexistence.Guard
	// AgentReports folds the cluster-profile-agent's reports into profiles.
	AgentReports bool
	// Deletions, when set, forecasts this mirror's deletions for the access
	// providers once it is set up.
	Deletions *Deletions
	// Facts is the write budget of the properties made of claims (the zero
	// rule writes every change at once).
	Facts damping.Rule
	// Namespace is the manager's own namespace, which holds the id records
	// (only hub admins and the manager write there).
	Namespace string
}

// Capability is the mirror as the manager starts it: gate ClusterProfile;
// its teardown deletes the profiles it published, which needs the right to
// delete profiles, so it runs only when the operator asks for cleanup.
func Capability(opts Options) capability.Capability {
	return capability.Capability{
		Name:     "mirror",
		Gate:     features.ClusterProfile,
		Requires: append([]schema.GroupVersionKind{clusterprofile.API}, membership.APIs...),
		Indexes:  []fieldindex.Index{clusterprofile.NameIndex, membership.Index, IDIndex},
		Setup: func(ctx context.Context, mgr ctrl.Manager, gates capability.Gates) error {
			opts := opts
			opts.AgentReports = gates.Enabled(features.ClusterProfileAgent)
			return Setup(ctx, mgr, opts)
		},
		Teardown: func(ctx context.Context, mgr ctrl.Manager) error {
			return Teardown(ctx, mgr, opts)
		},
		TeardownIsOptIn: true,
	}
}

// Setup registers the mirror's controller with the manager (the indexes it
// uses are the shared ones its Capability names).
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Guard == nil {
		opts.Guard = coexistence.NewGuard(mgr)
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	records, err := newIDRecordsCache(ctx, mgr, opts.Namespace)
	if err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), records, eventnote.Truncating(mgr.GetEventRecorder(ControllerName)), opts)
	if err := r.SetupWithManager(mgr, opts.Workers); err != nil {
		return err
	}
	if opts.Deletions != nil {
		opts.Deletions.running(opts.ManagerName, membership.Reader{Client: mgr.GetClient()}, opts.Guard)
	}
	return nil
}

// Teardown deletes the profiles this mirror published, unless OCM's
// built-in mirror is on: its profiles share the manager name.
func Teardown(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	log := ctrl.Log.WithName("mirror-teardown")
	if passive, err := coexistence.NewGuard(mgr).Passive(ctx); err != nil || passive {
		log.Info("Not deleting ClusterProfiles while OCM's built-in mirror is enabled (or its state unknown)", "error", err)
		return err
	}
	deleted, err := deletePublished(ctx, mgr.GetAPIReader(), clusterprofile.NewWriter(Identity, mgr.GetClient()), opts.ManagerName)
	if deleted > 0 {
		log.Info("Deleted the ClusterProfiles this mirror had published", "deleted", deleted)
	}
	return err
}

// deletePublished deletes the profiles this mirror published for
// managerName: those of that manager that carry the mirror's field manager.
// Profiles of other managers, or of the same manager name written only by
// someone else (such as OCM's built-in mirror), are left alone. reader must
// return managedFields (an API reader, not the cache).
func deletePublished(ctx context.Context, reader client.Reader, writer *clusterprofile.Writer, managerName string) (int, error) {
	return capability.EachListed(ctx, reader, &cpv1alpha1.ClusterProfileList{}, func(ctx context.Context, obj client.Object) (bool, error) {
		p := obj.(*cpv1alpha1.ClusterProfile)
		if !managedBy(p, managerName) || !fieldmanager.WrittenBy(p, clusterprofile.MirrorFieldManager) {
			return false, nil
		}
		if err := writer.Delete(ctx, p); err != nil {
			return false, err
		}
		return true, nil
	}, client.MatchingLabels{clusterprofile.LabelClusterManager: managerName})
}
