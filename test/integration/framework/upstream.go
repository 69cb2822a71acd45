package framework

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateUpstreamManager creates an upstream component's manager Deployment
// as its chart does (name, namespace, command line), from which the bundle
// tells whether that component's own ClusterProfile writer is on (e.g.
// cluster-proxy-addon-manager with
// --feature-gates=ClusterProfileAccessProvider=true): in an upstream
// namespace (coexistence.DefaultUpstreamNamespace), with the component's
// ClusterManagementAddOn (InstallUpstreamAddOn), what a hub admin installs;
// anywhere else, a decoy. No kubelet runs it here. It is deleted when the
// test ends.
func CreateUpstreamManager(ctx context.Context, t testing.TB, c client.Client, namespace, name string, args ...string) *appsv1.Deployment {
	t.Helper()
	EnsureNamespace(ctx, t, c, namespace)
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "manager", Image: "upstream/" + name, Command: []string{"/manager"}, Args: args}}}},
		}}
	if err := c.Create(ctx, d); err != nil {
		t.Fatalf("creating Deployment %s/%s: %v", namespace, name, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), d) })
	return d
}

// SetManagerArgs replaces the args of an upstream manager Deployment's
// container, as `helm upgrade` with other feature gates does.
func SetManagerArgs(ctx context.Context, t testing.TB, c client.Client, d *appsv1.Deployment, args ...string) {
	t.Helper()
	Update(ctx, t, c, d, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args = args })
}

// InstallUpstreamAddOn creates the ClusterManagementAddOn an upstream
// component's install creates (cluster-proxy, managed-serviceaccount), as a
// hub admin; it is deleted when the test ends. Creating it again is fine.
func InstallUpstreamAddOn(ctx context.Context, t testing.TB, c client.Client, name string) {
	t.Helper()
	addOn := &addonv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1beta1.ClusterManagementAddOnSpec{InstallStrategy: addonv1beta1.InstallStrategy{Type: addonv1beta1.AddonInstallStrategyManual}}}
	if err := c.Create(ctx, addOn); client.IgnoreAlreadyExists(err) != nil {
		t.Fatalf("creating ClusterManagementAddOn %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), addOn) })
}
