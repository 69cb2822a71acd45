package framework

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateNamespace creates a namespace.
func CreateNamespace(ctx context.Context, t testing.TB, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// EnsureNamespace creates a namespace unless it exists (one the tests
// share, such as the upstream components' namespace).
func EnsureNamespace(ctx context.Context, t testing.TB, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// CreateCluster creates a ManagedCluster with its status, and deletes it
// (dropping finalizers) when the test ends.
func CreateCluster(ctx context.Context, t testing.TB, c client.Client, cluster *clusterv1.ManagedCluster) {
	t.Helper()
	status := cluster.Status.DeepCopy()
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatalf("creating ManagedCluster %s: %v", cluster.Name, err)
	}
	cluster.Status = *status
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatalf("writing status of ManagedCluster %s: %v", cluster.Name, err)
	}
	t.Cleanup(func() { forceDelete(context.Background(), t, c, &clusterv1.ManagedCluster{}, cluster.Name, "") })
}

// CreateClusterSet creates a ManagedClusterSet, deleted when the test ends.
func CreateClusterSet(ctx context.Context, t testing.TB, c client.Client, set *clusterv1beta2.ManagedClusterSet) {
	t.Helper()
	if err := c.Create(ctx, set); err != nil {
		t.Fatalf("creating ManagedClusterSet %s: %v", set.Name, err)
	}
	t.Cleanup(func() { forceDelete(context.Background(), t, c, &clusterv1beta2.ManagedClusterSet{}, set.Name, "") })
}

// CreateBinding creates a ManagedClusterSetBinding with its status.
func CreateBinding(ctx context.Context, t testing.TB, c client.Client, binding *clusterv1beta2.ManagedClusterSetBinding) {
	t.Helper()
	status := binding.Status.DeepCopy()
	if err := c.Create(ctx, binding); err != nil {
		t.Fatalf("creating ManagedClusterSetBinding %s/%s: %v", binding.Namespace, binding.Name, err)
	}
	binding.Status = *status
	if err := c.Status().Update(ctx, binding); err != nil {
		t.Fatalf("writing status of ManagedClusterSetBinding %s/%s: %v", binding.Namespace, binding.Name, err)
	}
}

// UpdateClusterStatus changes a ManagedCluster's status with retries on conflict.
func UpdateClusterStatus(ctx context.Context, t testing.TB, c client.Client, name string, mutate func(*clusterv1.ManagedCluster)) {
	t.Helper()
	mutateWithRetry(ctx, t, c, &clusterv1.ManagedCluster{}, types.NamespacedName{Name: name}, true, func(o client.Object) {
		mutate(o.(*clusterv1.ManagedCluster))
	})
}

// UpdateCluster changes a ManagedCluster's metadata or spec with retries on conflict.
func UpdateCluster(ctx context.Context, t testing.TB, c client.Client, name string, mutate func(*clusterv1.ManagedCluster)) {
	t.Helper()
	mutateWithRetry(ctx, t, c, &clusterv1.ManagedCluster{}, types.NamespacedName{Name: name}, false, func(o client.Object) {
		mutate(o.(*clusterv1.ManagedCluster))
	})
}

// Update changes any object's metadata or spec with retries on conflict.
func Update[T client.Object](ctx context.Context, t testing.TB, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	mutateWithRetry(ctx, t, c, obj, client.ObjectKeyFromObject(obj), false, func(o client.Object) { mutate(o.(T)) })
}

// UpdateStatus changes any object's status with retries on conflict.
func UpdateStatus[T client.Object](ctx context.Context, t testing.TB, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	mutateWithRetry(ctx, t, c, obj, client.ObjectKeyFromObject(obj), true, func(o client.Object) { mutate(o.(T)) })
}

func mutateWithRetry(ctx context.Context, t testing.TB, c client.Client, obj client.Object, key types.NamespacedName, status bool, mutate func(client.Object)) {
	t.Helper()
	for attempt := 0; attempt < 10; attempt++ {
		if err := c.Get(ctx, key, obj); err != nil {
			t.Fatalf("reading %T %s: %v", obj, key, err)
		}
		mutate(obj)
		var err error
		if status {
			err = c.Status().Update(ctx, obj)
		} else {
			err = c.Update(ctx, obj)
		}
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatalf("updating %T %s: %v", obj, key, err)
		}
	}
	t.Fatalf("updating %T %s: too many conflicts", obj, key)
}

// forceDelete removes an object, dropping finalizers first.
func forceDelete(ctx context.Context, t testing.TB, c client.Client, obj client.Object, name, namespace string) {
	key := types.NamespacedName{Name: name, Namespace: namespace}
	if err := c.Get(ctx, key, obj); err != nil {
		return
	}
	if len(obj.GetFinalizers()) > 0 {
		obj.SetFinalizers(nil)
		if err := c.Update(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("dropping finalizers of %s: %v", name, err)
		}
	}
	if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		t.Logf("deleting %s: %v", name, err)
	}
}

// Profiles lists the ClusterProfiles named name in every namespace, by namespace.
func Profiles(ctx context.Context, c client.Client, name string) (map[string]*cpv1alpha1.ClusterProfile, error) {
	list := &cpv1alpha1.ClusterProfileList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	out := map[string]*cpv1alpha1.ClusterProfile{}
	for i := range list.Items {
		if list.Items[i].Name == name {
			out[list.Items[i].Namespace] = &list.Items[i]
		}
	}
	return out, nil
}

// LabelClusterName is the label OCM's registration hub puts on every
// ManagedCluster, holding its name.
const LabelClusterName = "name"

// Serve makes namespace serve cluster the way a hub admin does: the cluster
// (created if missing) carries OCM's name label, a set selects it by that
// label, and a Bound binding of the set lives in namespace. It is what any
// profile, access entry or token copy of the cluster in namespace needs.
func Serve(ctx context.Context, t testing.TB, c client.Client, namespace, cluster string) {
	t.Helper()
	existing := &clusterv1.ManagedCluster{}
	switch err := c.Get(ctx, types.NamespacedName{Name: cluster}, existing); {
	case apierrors.IsNotFound(err):
		CreateCluster(ctx, t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster,
			Labels: map[string]string{LabelClusterName: cluster}}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	case err != nil:
		t.Fatalf("reading ManagedCluster %s: %v", cluster, err)
	case existing.Labels[LabelClusterName] != cluster:
		UpdateCluster(ctx, t, c, cluster, func(mc *clusterv1.ManagedCluster) {
			if mc.Labels == nil {
				mc.Labels = map[string]string{}
			}
			mc.Labels[LabelClusterName] = cluster
		})
	}
	set := "serve-" + cluster
	if err := c.Get(ctx, types.NamespacedName{Name: set}, &clusterv1beta2.ManagedClusterSet{}); apierrors.IsNotFound(err) {
		CreateClusterSet(ctx, t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType:  clusterv1beta2.LabelSelector,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelClusterName: cluster}},
			}}})
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: set}, binding); apierrors.IsNotFound(err) {
		CreateBinding(ctx, t, c, &clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
			Status: clusterv1beta2.ManagedClusterSetBindingStatus{Conditions: []metav1.Condition{{
				Type: clusterv1beta2.ClusterSetBindingBoundType, Status: metav1.ConditionTrue, Reason: "ClusterSetBound",
				LastTransitionTime: metav1.Now()}}},
		})
	}
}

// ServiceAccountToken asks TokenRequest for a short-lived token of an
// existing ServiceAccount.
func ServiceAccountToken(ctx context.Context, t testing.TB, c client.Client, namespace, name string) string {
	t.Helper()
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := c.SubResource("token").Create(ctx, account, request); err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", namespace, name, err)
	}
	return strings.TrimSpace(request.Status.Token)
}
