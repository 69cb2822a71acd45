package multikueue

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
)

// Options configure the capability.
type Options struct {
	// ManagerName is the cluster manager whose profiles count as ours.
	ManagerName string
	// Namespace is Kueue's namespace (Configuration.namespace).
	Namespace string
	// ConfigName, when set, names a MultiKueueConfig kept listing our
	// MultiKueueClusters.
	ConfigName string
}

// Capability is the MultiKueue integration as the manager starts it: gate
// ClusterProfileMultiKueue, once Kueue's v1beta2 API is served. Its
// teardown deletes the MultiKueueClusters (and config) it created, which
// needs rights on Kueue's objects the manager holds only while the gate is
// on, so it runs only when the operator asks for cleanup.
func Capability(opts Options) capability.Capability {
	requires := append([]schema.GroupVersionKind{clusterprofile.API, ClusterKind}, membership.APIs...)
	if opts.ConfigName != "" {
		requires = append(requires, ConfigKind)
	}
	return capability.Capability{
		Name:     "MultiKueue integration",
		Gate:     features.ClusterProfileMultiKueue,
		Requires: requires,
		Indexes:  []fieldindex.Index{clusterprofile.NameIndex, membership.Index},
		Setup: func(ctx context.Context, mgr ctrl.Manager, _ capability.Gates) error {
			return Setup(ctx, mgr, opts)
		},
		Teardown: func(ctx context.Context, mgr ctrl.Manager) error {
			return Teardown(ctx, mgr, opts)
		},
		TeardownIsOptIn: true,
	}
}

// Setup registers the controllers with the manager.
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	readers := Readers{Cache: mgr.GetCache(), API: mgr.GetAPIReader()}
	recorder := mgr.GetEventRecorder(ControllerName)
	if err := NewReconciler(mgr.GetClient(), readers, recorder, opts).SetupWithManager(mgr); err != nil {
		return err
	}
	if opts.ConfigName == "" {
		return nil
	}
	return NewConfigReconciler(mgr.GetClient(), readers, recorder, opts).SetupWithManager(mgr)
}

// Teardown deletes the MultiKueueClusters and MultiKueueConfigs we created
// (label and field manager); Kueue's API not being served means there is
// nothing to delete.
func Teardown(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if !capability.APIServed(mgr.GetRESTMapper(), ClusterKind) {
		return nil
	}
	deleted, err := deleteCreated(ctx, mgr.GetAPIReader(), mgr.GetClient(), ClusterKind, opts.ManagerName)
	if err == nil && capability.APIServed(mgr.GetRESTMapper(), ConfigKind) {
		var configs int
		configs, err = deleteCreated(ctx, mgr.GetAPIReader(), mgr.GetClient(), ConfigKind, opts.ManagerName)
		deleted += configs
	}
	if deleted > 0 {
		ctrl.Log.WithName("multikueue-teardown").Info("Deleted the Kueue objects the MultiKueue integration had created", "deleted", deleted)
	}
	return err
}

// deleteCreated deletes, page by page, the objects of kind that we created.
// reader must return managedFields (an API reader, not the cache).
func deleteCreated(ctx context.Context, reader client.Reader, c client.Client, kind schema.GroupVersionKind, managerName string) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
	return capability.EachListed(ctx, reader, list, func(ctx context.Context, obj client.Object) (bool, error) {
		if !ours(obj, managerName) {
			return false, nil
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
			return false, err
		}
		return true, nil
	}, client.MatchingLabels{LabelCreatedBy: managerName})
}
