//go:build linux

package ocm

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
)

const (
	// hubNamespace is where the ClusterManager runs the hub controllers and
	// webhooks.
	hubNamespace = "open-cluster-management-hub"
	// operatorNamespace holds the bootstrap service account, as clusteradm
	// init creates it.
	operatorNamespace = "open-cluster-management"
	bootstrapSA       = "agent-registration-bootstrap"
	bootstrapRole     = "open-cluster-management:bootstrap"
)

// hubCRDFiles are the hub's CRDs that the ClusterManager does not install,
// from the modules this repository pins: the ClusterProfile CRD (the
// operator installs its own copy only with the ClusterProfile gate on) and
// the addons'.
func (h *Hub) hubCRDFiles() ([]string, error) {
	files := []struct{ module, path string }{
		{binaries.ProfileModule, "config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml"},
		{binaries.MSAModule, "config/crd/bases/authentication.open-cluster-management.io_managedserviceaccounts.yaml"},
		{binaries.ProxyModule, "hack/crd/bases/proxy.open-cluster-management.io_managedproxyconfigurations.yaml"},
		{binaries.ProxyModule, "hack/crd/bases/proxy.open-cluster-management.io_managedproxyserviceresolvers.yaml"},
	}
	var paths []string
	for _, f := range files {
		p, err := h.Modules.File(f.module, f.path)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// InstallCRDs installs the hub's CRDs that the ClusterManager does not, as
// their charts would: the ClusterProfile CRD and the addons'.
func (h *Hub) InstallCRDs() error {
	files, err := h.hubCRDFiles()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(h.ControlPlane.Config, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing hub CRDs: %w", err)
	}
	return nil
}

// CreateBootstrapRBAC creates what `clusteradm init` creates for
// registration: the bootstrap ClusterRole (rules as in OCM's cluster-manager
// chart, bootstrap_cluster_role.yaml) bound to the agent-registration-
// bootstrap service account, whose token goes into the bootstrap kubeconfig.
func (h *Hub) CreateBootstrapRBAC(ctx context.Context) error {
	c, err := h.ControlPlane.Clientset()
	if err != nil {
		return err
	}
	for _, ns := range []string{operatorNamespace, hubNamespace} {
		if err := ignoreExists(c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: bootstrapSA, Namespace: operatorNamespace}}
	if err := ignoreExists(c.CoreV1().ServiceAccounts(operatorNamespace).Create(ctx, sa, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("creating service account %s: %w", bootstrapSA, err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		},
	}
	if err := ignoreExists(c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("creating ClusterRole %s: %w", bootstrapRole, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapRole + ":agent-registration"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bootstrapRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: bootstrapSA, Namespace: operatorNamespace}},
	}
	if err := ignoreExists(c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", binding.Name, err)
	}
	return nil
}

// bootstrapToken gets a token of the bootstrap service account through
// TokenRequest, as `clusteradm get token` does.
func bootstrapToken(ctx context.Context, c kubernetes.Interface) (string, error) {
	tr, err := c.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, bootstrapSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of %s/%s: %w", operatorNamespace, bootstrapSA, err)
	}
	return tr.Status.Token, nil
}

// ignoreExists is err, nil when the object created already exists.
func ignoreExists[T any](_ T, err error) error { return client.IgnoreAlreadyExists(err) }
