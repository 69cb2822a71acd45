package agent_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"open-cluster-management.io/addon-framework/pkg/addonmanager/addontesting"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestTheAgentWorksWithItsOwnRightsAndNoMore installs the agent's
// managed-cluster RBAC exactly as the addon renders it, runs the agent as
// its ServiceAccount, and checks both halves: it reports, and it cannot
// change the klusterlet's reserved claims or another component's Lease.
func TestTheAgentWorksWithItsOwnRightsAndNoMore(t *testing.T) {
	ctx := framework.ContextFor(t)
	cleanUpClaims(t)
	agentUser := installAgentRBAC(ctx, t, "rbac-c1")
	asAgent := rest.CopyConfig(managed.Config)
	asAgent.Impersonate = rest.ImpersonationConfig{UserName: agentUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + addonNamespace, "system:authenticated"}}

	createAddon(ctx, t, "rbac-c1")
	startAgent(t, agentRun{cluster: "rbac-c1", managed: asAgent})
	NewWithT(t).Eventually(func(g Gomega) []string {
		var names []string
		for name := range agentClaimValues(g, ctx) {
			names = append(names, name)
		}
		return names
	}, framework.Timeout, framework.Interval).Should(ConsistOf( // no GPU on this cluster's nodes: no GPU claims
		agentapi.ClaimNodes, agentapi.ClaimNodesReady, agentapi.ClaimCPUCapacity, agentapi.ClaimCPUAllocatable,
		agentapi.ClaimMemoryCapacity, agentapi.ClaimMemoryAllocatable, agentapi.ClaimPodsAllocatable))

	reserved := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "id.k8s.io"},
		Spec: clusterv1alpha1.ClusterClaimSpec{Value: "the-klusterlets-id"}}
	if _, err := managedClaim.ClusterV1alpha1().ClusterClaims().Create(ctx, reserved, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: addonNamespace, Name: "another-component"}}
	if _, err := managedKube.CoordinationV1().Leases(addonNamespace).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = managedKube.CoordinationV1().Leases(addonNamespace).Delete(context.Background(), other.Name, metav1.DeleteOptions{})
	})
	claims, err := clusterclientset.NewForConfig(asAgent)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(asAgent)
	if err != nil {
		t.Fatal(err)
	}
	reserved.Spec.Value = "forged"
	expectForbidden(t, "update the reserved claim id.k8s.io", func() error {
		_, err := claims.ClusterV1alpha1().ClusterClaims().Update(ctx, reserved, metav1.UpdateOptions{})
		return err
	})
	expectForbidden(t, "delete the reserved claim id.k8s.io", func() error {
		return claims.ClusterV1alpha1().ClusterClaims().Delete(ctx, reserved.Name, metav1.DeleteOptions{})
	})
	expectForbidden(t, "update another component's Lease", func() error {
		_, err := kube.CoordinationV1().Leases(addonNamespace).Update(ctx, other, metav1.UpdateOptions{})
		return err
	})
	expectForbidden(t, "read Secrets", func() error {
		_, err := kube.CoreV1().Secrets(addonNamespace).List(ctx, metav1.ListOptions{})
		return err
	})
}

// installAgentRBAC creates, on the managed cluster, the ServiceAccount and
// the RBAC objects the addon renders for cluster, and returns the agent's
// user name.
func installAgentRBAC(ctx context.Context, t *testing.T, cluster string) string {
	t.Helper()
	//lint:ignore SA1019 OCM's generated clientset has no NewClientset
	agentAddon, err := addon.NewAgentAddon(kubefake.NewClientset(), addonfake.NewSimpleClientset(), addon.DefaultOptions("example.com/bundle:test"))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := agentAddon.Manifests(ctx, addontesting.NewManagedCluster(cluster), addontesting.NewAddon(agentapi.AddonName, cluster))
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, o := range objects {
		switch obj := o.(type) {
		case *appsv1.Deployment:
			user = "system:serviceaccount:" + obj.Namespace + ":" + obj.Spec.Template.Spec.ServiceAccountName
			continue
		case *corev1.Namespace:
			continue
		}
		obj := o.(client.Object)
		if err := managed.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating the rendered %T %s: %v", obj, obj.GetName(), err)
		}
		t.Cleanup(func() { _ = managed.Client.Delete(context.Background(), obj) })
	}
	if user == "" {
		t.Fatal("the addon renders no Deployment")
	}
	return user
}

func expectForbidden(t *testing.T, what string, do func() error) {
	t.Helper()
	if err := do(); !apierrors.IsForbidden(err) {
		t.Errorf("the agent may %s: got %v, want Forbidden", what, err)
	}
}
