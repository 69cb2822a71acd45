package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

const agentCluster = "agent-c1"

// The agent runs against a managed control plane and reports to the hub with
// the identity the addon registration gives it; the test plays the
// klusterlet (claims to ManagedCluster status, the addon's Available from its
// lease). The profile then tells a consumer whether the cluster is fit.
func TestTheAgentsReportReachesTheClusterProfile(t *testing.T) {
	ctx := framework.ContextFor(t)
	g := NewWithT(t)
	c := hub.Client

	// The managed cluster: two nodes, one of them with GPUs, and a control
	// plane whose scheduler stopped renewing its lease.
	for _, n := range []*corev1.Node{
		agenttest.MakeNode("agent-node-a").Capacity("8", "32Gi", "110").Allocatable("7500m", "30Gi", "110").GPUs("4", "4").Obj(),
		agenttest.MakeNode("agent-node-b").Capacity("8", "32Gi", "110").Allocatable("7500m", "30Gi", "110").Obj(),
	} {
		createManaged(ctx, t, n)
	}
	ensureAgentNamespace(ctx, t) // for the addon lease
	createManaged(ctx, t, agenttest.MakeLease("kube-system", "kube-controller-manager", time.Now()))
	createManaged(ctx, t, agenttest.MakeLease("kube-system", "kube-scheduler", time.Now().Add(-10*time.Minute)))

	// The hub: the cluster, published into a namespace, and its addon.
	cma := &addonapiv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: agentapi.AddonName},
		Spec: addonapiv1beta1.ClusterManagementAddOnSpec{InstallStrategy: addonapiv1beta1.InstallStrategy{Type: addonapiv1beta1.AddonInstallStrategyManual}}}
	must(t, c.Create(ctx, cma))
	t.Cleanup(func() { _ = c.Delete(context.Background(), cma) })
	framework.CreateNamespace(ctx, t, c, agentCluster)
	framework.CreateNamespace(ctx, t, c, "agent-consumer")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("agent-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(agentCluster).ClusterSet("agent-set").
		Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("agent-consumer", "agent-set").Bound(true).Obj())
	must(t, c.Create(ctx, &addonapiv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: agentCluster, Name: agentapi.AddonName,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "addon.open-cluster-management.io/v1beta1", Kind: "ClusterManagementAddOn",
			Name: cma.Name, UID: cma.UID}}}}))
	framework.StartManager(t, hub, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true, "ClusterProfileAgent": true}})

	// The agent, with the hub identity the addon manager granted.
	runAgent(ctx, t, agentIdentity(t))
	g.Eventually(func(g Gomega) []string {
		addon := &addonapiv1beta1.ManagedClusterAddOn{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: agentCluster, Name: agentapi.AddonName}, addon)).To(Succeed())
		var types []string
		for _, cond := range addon.Status.Conditions {
			types = append(types, cond.Type)
		}
		return types
	}, framework.Timeout, framework.Interval).Should(ContainElements(agentapi.ConditionControlPlaneHealthy, agentapi.ConditionAllNodesHealthy))

	// The klusterlet's part: claims to the ManagedCluster, lease to Available.
	copyClaimsToTheHub(ctx, t)
	setAddonAvailable(ctx, t, metav1.ConditionTrue)

	profile := func(g Gomega) *cpv1alpha1.ClusterProfile {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "agent-consumer", Name: agentCluster}, p)).To(Succeed())
		return p
	}
	g.Eventually(func(g Gomega) {
		p := profile(g)
		conditions := map[string]metav1.Condition{}
		for _, cond := range p.Status.Conditions {
			conditions[cond.Type] = cond
		}
		g.Expect(conditions["ControlPlaneHealthy"].Status).To(Equal(metav1.ConditionFalse))
		g.Expect(conditions["ControlPlaneHealthy"].Reason).To(Equal(agentapi.ReasonAgentChecksFailed))
		g.Expect(conditions["ControlPlaneHealthy"].Message).To(ContainSubstring("kube-scheduler"))
		g.Expect(conditions["AllNodesHealthy"].Status).To(Equal(metav1.ConditionTrue))
		g.Expect(conditions["AllNodesHealthy"].Reason).To(Equal(agentapi.ReasonAgentNodesHealthy))
		properties := map[string]string{}
		for _, prop := range p.Status.Properties {
			properties[prop.Name] = prop.Value
		}
		g.Expect(properties).To(HaveKeyWithValue(agentapi.ClaimNodes, "2"))
		g.Expect(properties).To(HaveKeyWithValue(agentapi.ClaimNodesReady, "2"))
		g.Expect(properties).To(HaveKeyWithValue(agentapi.ClaimGPUAllocatable, "4"))
		g.Expect(properties).To(HaveKeyWithValue(agentapi.ClaimCPUAllocatable, "15"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// The agent goes quiet: the profile falls back to the klusterlet, saying so.
	setAddonAvailable(ctx, t, metav1.ConditionUnknown)
	g.Eventually(func(g Gomega) {
		p := profile(g)
		var reasons []string
		for _, cond := range p.Status.Conditions {
			reasons = append(reasons, cond.Type+"="+cond.Reason)
		}
		g.Expect(reasons).To(ConsistOf("ControlPlaneHealthy=NoFreshAgentReport", "Joined=ManagedClusterJoined"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func createManaged(ctx context.Context, t *testing.T, obj client.Object) {
	t.Helper()
	status := obj.DeepCopyObject().(client.Object)
	must(t, managed.Client.Create(ctx, obj))
	if node, ok := status.(*corev1.Node); ok {
		node.ResourceVersion = obj.GetResourceVersion()
		must(t, managed.Client.Status().Update(ctx, node))
	}
	t.Cleanup(func() { _ = managed.Client.Delete(context.Background(), obj) })
}

// ensureAgentNamespace creates the agent's namespace on the managed cluster
// once; namespaces are never deleted (envtest runs no namespace controller).
func ensureAgentNamespace(ctx context.Context, t *testing.T) {
	t.Helper()
	err := managed.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNS}})
	must(t, client.IgnoreAlreadyExists(err))
}

// agentIdentity is the hub config of the agent's registration identity.
func agentIdentity(t *testing.T) *rest.Config {
	cfg := rest.CopyConfig(hub.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:open-cluster-management:cluster:" + agentCluster + ":addon:" + agentapi.AddonName + ":agent:" + agentapi.AgentName,
		Groups: []string{"system:open-cluster-management:cluster:" + agentCluster + ":addon:" + agentapi.AddonName,
			"system:open-cluster-management:addon:" + agentapi.AddonName, "system:authenticated"},
	}
	return cfg
}

// runAgent runs the agent on its manager, as the binary does, until the test ends.
func runAgent(ctx context.Context, t *testing.T, hubConfig *rest.Config) {
	t.Helper()
	mgr, err := ctrl.NewManager(managed.Config, agent.ManagerOptions("0"))
	must(t, err)
	must(t, agent.Setup(mgr, agent.Options{ClusterName: agentCluster, AddonNamespace: agentapi.DefaultInstallNamespace,
		Period: 200 * time.Millisecond, LeaseStaleAfter: time.Minute, MinWriteInterval: time.Millisecond}, hubConfig))
	agentCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(agentCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})
}

// copyClaimsToTheHub does what the klusterlet does with ClusterClaims.
func copyClaimsToTheHub(ctx context.Context, t *testing.T) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		claims := &clusterv1alpha1.ClusterClaimList{}
		g.Expect(managed.Client.List(ctx, claims)).To(Succeed())
		var copied []clusterv1.ManagedClusterClaim
		for _, claim := range claims.Items {
			if strings.HasSuffix(claim.Name, agentapi.ClaimSuffix) {
				copied = append(copied, clusterv1.ManagedClusterClaim{Name: claim.Name, Value: claim.Spec.Value})
			}
		}
		g.Expect(copied).To(HaveLen(9))
		framework.UpdateClusterStatus(ctx, t, hub.Client, agentCluster, func(mc *clusterv1.ManagedCluster) {
			mc.Status.ClusterClaims = copied
		})
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// setAddonAvailable does what the klusterlet does with the addon's lease.
func setAddonAvailable(ctx context.Context, t *testing.T, status metav1.ConditionStatus) {
	t.Helper()
	framework.UpdateStatus(ctx, t, hub.Client, &addonapiv1beta1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: agentCluster, Name: agentapi.AddonName}},
		func(a *addonapiv1beta1.ManagedClusterAddOn) {
			// Replaced, not set: the condition transitions now whatever its status was.
			meta.RemoveStatusCondition(&a.Status.Conditions, "Available")
			a.Status.Conditions = append(a.Status.Conditions, metav1.Condition{Type: "Available", Status: status,
				Reason: "ManagedClusterAddOnLeaseUpdated", LastTransitionTime: metav1.Now()})
		})
}
