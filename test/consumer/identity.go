package consumer

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// ServiceAccount is the consumer's hub identity, as Kueue's controller runs.
const ServiceAccount = "kueue-controller-manager"

// WriteKubeconfig gives the consumer of namespace its own hub identity, as
// a platform engineer would for MultiKueue: a service account allowed to
// get Secrets (the synced token copies) in its namespace and nothing else,
// and writes a kubeconfig at path with a token of it and the namespace as
// the context's (cp-creds reads the copy there). admin creates the objects.
func WriteKubeconfig(ctx context.Context, admin *rest.Config, namespace, path string) error {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	if err := createIdentity(ctx, cs, namespace); err != nil {
		return err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of %s/%s: %w", namespace, ServiceAccount, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[ServiceAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["consumer"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: ServiceAccount, Namespace: namespace}
	cfg.CurrentContext = "consumer"
	return clientcmd.WriteToFile(*cfg, path)
}

func createIdentity(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	_, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccount}}, metav1.CreateOptions{})
	if ignoreExists(err) != nil {
		return err
	}
	_, err = cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-synced-tokens"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	if ignoreExists(err) != nil {
		return err
	}
	_, err = cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kueue-reads-synced-tokens"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-synced-tokens"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: ServiceAccount}}}, metav1.CreateOptions{})
	return ignoreExists(err)
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
