// Package fakeclient is controller-runtime's fake client set up as the
// manager's cache is: the project's scheme, the status subresources and
// the shared field indexes of pkg/clusterprofile and pkg/membership. It
// lives apart from the builders in pkg/util/testing, which import no
// package of this project, because it needs those packages.
package fakeclient

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// integration tests). It serves no ClusterProfile CRD, so writers take the
// atomic-list path, which the fake client implements faithfully (its
// Server-Side Apply knows no list-map schema).
func New(objs ...client.Object) client.WithWatch {
	return Builder(objs...).Build()
}

// Builder is New's builder, for tests that add the indexes of a
// capability's own caches.
func Builder(objs ...client.Object) *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
		WithStatusSubresource(&cpv1alpha1.ClusterProfile{}, &clusterv1.ManagedCluster{}, &clusterv1beta2.ManagedClusterSetBinding{}).
		WithIndex(&cpv1alpha1.ClusterProfile{}, clusterprofile.IndexByName, clusterprofile.IndexProfileName).
		WithIndex(&clusterv1beta2.ManagedClusterSetBinding{}, membership.BindingClusterSetKey, membership.IndexBindingClusterSet).
		WithInterceptorFuncs(interceptor.Funcs{Patch: applyCreatesWithAResourceVersion})
}

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
