package consumer

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// AllowListingNamespaces lets the ManagedServiceAccount's service account
// (which the managed-serviceaccount agent creates in the addon namespace)
// list namespaces on a managed cluster: what the consumer does there.
func AllowListingNamespaces(ctx context.Context, managed kubernetes.Interface) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ManagedServiceAccount + "-list-namespaces"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}}}}
	if _, err := managed.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind,
			Namespace: agentapi.DefaultInstallNamespace, Name: ManagedServiceAccount}}}
	_, err := managed.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}
