package framework

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// ClusterProxyNamespace is where the tests install cluster-proxy's servers
// (the addon's default).
const ClusterProxyNamespace = "open-cluster-management-addon"

// InstallClusterProxy creates what the cluster-proxy addon would: its
// ManagedProxyConfiguration and its user server's certificate Secret, whose
// tls.crt (ca) the cluster-proxy access entry publishes as CA. Both go
// when the test ends.
func InstallClusterProxy(ctx context.Context, t testing.TB, c client.Client, ca []byte) *corev1.Secret {
	t.Helper()
	CreateClusterProxyConfiguration(ctx, t, c)
	return CreateUserServerSecret(ctx, t, c, ca)
}

// CreateClusterProxyConfiguration creates cluster-proxy's
// ManagedProxyConfiguration, its servers in ClusterProxyNamespace (created
// when missing), deleted when the test ends.
func CreateClusterProxyConfiguration(ctx context.Context, t testing.TB, c client.Client) {
	t.Helper()
	EnsureNamespace(ctx, t, c, ClusterProxyNamespace)
	config := utiltesting.MakeProxyConfiguration(ClusterProxyNamespace)
	if err := c.Create(ctx, config); err != nil {
		t.Fatalf("creating ManagedProxyConfiguration: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), config) })
}

// CreateUserServerSecret creates cluster-proxy's user server certificate
// Secret in ClusterProxyNamespace with ca as its tls.crt, deleted when the
// test ends.
func CreateUserServerSecret(ctx context.Context, t testing.TB, c client.Client, ca []byte) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: accessprovider.UserServerSecretName, Namespace: ClusterProxyNamespace},
		Data:       map[string][]byte{accessprovider.UserServerCAKey: ca, "tls.key": []byte("key")},
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatalf("creating the user server Secret: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), secret) })
	return secret
}
