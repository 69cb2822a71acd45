// Package fakeclient is controller-runtime's fake client set up as the
// manager's cache is: the project's scheme, the status subresources and
// the shared field indexes of pkg/clusterprofile and pkg/membership. It
// lives apart from the builders in pkg/util/testing, which import no
// package of this project, because it needs those packages.
//
// It serves a ClusterProfile CRD, the chart's (New) or one with atomic
// status lists (NewAtomic), and applies ClusterProfiles with that CRD's
// schema, so the writers take the path the CRD calls for and their applies
// merge as the API server merges them.
//
// One thing it does not do as the API server does (controller-runtime
// v0.23): record an apply of the status subresource as such. Its field
// manager records every apply for the main resource, and a status apply as
// the whole object (the live metadata and spec with the applied status);
// see TestAStatusApplyIsNotRecordedAsStatus. The applies merge right, but
// on list-maps a writer's share of the status is what its status apply
// owns in managedFields, so after a status apply through the fake the
// writer's plans see none of it as theirs: the next one applies again, and
// a withdrawal (Writer.Withdraw) plans no write. Tests of those give the
// profile the managedFields the API server would record, or belong to the
// integration suite.
package fakeclient

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoapplyconfigurations "k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// New is a fake client with the project's scheme, the status
// subresources and the same field indexes the manager's cache has, for unit
// tests of map functions and reconcilers (the wiring is covered by the
// integration tests). It serves the chart's ClusterProfile CRD (ChartCRD;
// objs must hold no CRD of that name), whose status lists are list-maps, and
// applies ClusterProfiles with that CRD's schema: writers take the list-map
// path, and Server-Side Apply merges each status list by key, as on almost
// every hub. Like the fake client, it returns no managedFields unless
// built with WithReturnManagedFields.
func New(objs ...client.Object) client.WithWatch {
	return Builder(objs...).Build()
}

// Builder is New's builder, for tests that add the indexes of a
// capability's own caches.
func Builder(objs ...client.Object) *fake.ClientBuilder {
	return builder(loaded().listMaps, objs)
}

// NewAtomic is New on a hub whose ClusterProfile CRD has atomic status
// lists (AtomicCRD, as OCM's operator installs): writers take the atomic
// path, merging their entries into the whole lists under optimistic lock,
// and a Server-Side Apply replaces each list it sends.
func NewAtomic(objs ...client.Object) client.WithWatch {
	return AtomicBuilder(objs...).Build()
}

// AtomicBuilder is NewAtomic's builder.
func AtomicBuilder(objs ...client.Object) *fake.ClientBuilder {
	return builder(loaded().atomic, objs)
}

func builder(crd servedCRD, objs []client.Object) *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(append([]client.Object{crd.crd.DeepCopy()}, objs...)...).
		// The fake's default converters, with the CRD's before the deduced
		// one, which knows no schema (every list atomic).
		WithTypeConverters(clientgoapplyconfigurations.NewTypeConverter(clientGoScheme()), crd.converter, managedfields.NewDeducedTypeConverter()).
		WithStatusSubresource(&cpv1alpha1.ClusterProfile{}, &clusterv1.ManagedCluster{}, &clusterv1beta2.ManagedClusterSetBinding{}).
		WithIndex(&cpv1alpha1.ClusterProfile{}, clusterprofile.IndexByName, clusterprofile.IndexProfileName).
		WithIndex(&clusterv1beta2.ManagedClusterSetBinding{}, membership.BindingClusterSetKey, membership.IndexBindingClusterSet).
		WithInterceptorFuncs(interceptor.Funcs{Patch: applyCreatesWithAResourceVersion})
}

// clientGoScheme holds client-go's types alone, as the fake's default
// converters have it: client-go's converter must fail on every other type,
// for the next converter to be asked.
var clientGoScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
})

// applyCreatesWithAResourceVersion: the fake client stores an object that a
// Server-Side Apply creates without a resourceVersion, where the API server
// gives it one; a later write under optimistic lock would then fail. An
// unconditional update after such an apply gives it one.
func applyCreatesWithAResourceVersion(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	if patch.Type() == types.ApplyPatchType && obj.GetResourceVersion() == "" {
		return c.Update(ctx, obj)
	}
	return nil
}

// SecretsIn returns the Secrets of a namespace by name, without the fields
// the API server sets, for tests that compare what a reconciler left with
// whole objects.
func SecretsIn(t testing.TB, c client.Client, namespace string) map[string]*corev1.Secret {
	t.Helper()
	list := &corev1.SecretList{}
	if err := c.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Secret{}
	for i := range list.Items {
		s := list.Items[i].DeepCopy()
		s.ResourceVersion, s.ManagedFields, s.TypeMeta = "", nil, metav1.TypeMeta{}
		out[s.Name] = s
	}
	return out
}
