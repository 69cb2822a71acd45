package agent_test

import (
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// quiet is how long the tests watch for writes that must not happen: many
// periods of the agent under test.
const quiet = 15 * testPeriod

// allNodesReady is AllNodesHealthy's message while no node is unhealthy
// (tolerance 0): it names no count, which would change with every node.
const allNodesReady = "Every node is Ready and under no memory, disk or PID pressure"

func TestReportsConditionsAndClaims(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "report"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("report-cpu").Capacity("8", "32Gi", "110").Allocatable("7800m", "31Gi", "110"))
	createNode(ctx, t, agenttest.MakeNode("report-gpu").Capacity("32", "256Gi", "110").GPUs("4", "4"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	// Claims that exist before the agent: somebody else's, and one that
	// carries the agent's label under a name that is not one of its claims
	// (the agent changes only its own names; its RBAC allows no other).
	foreign := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "platform.open-cluster-management.io"},
		Spec: clusterv1alpha1.ClusterClaimSpec{Value: "AWS"}}
	stale := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "old-name" + agentapi.ClaimSuffix,
		Labels: map[string]string{agentapi.ClaimLabel: agent.ClaimLabelValue}}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "x"}}
	for _, c := range []*clusterv1alpha1.ClusterClaim{foreign, stale} {
		if _, err := managedClaim.ClusterV1alpha1().ClusterClaims().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating ClusterClaim %s: %v", c.Name, err)
		}
	}
	hubRequests := framework.NewRequestCounter("managedclusteraddons", cluster)
	claimRequests := framework.NewRequestCounter("clusterclaims", "")
	stop := startAgent(t, agentRun{cluster: cluster, hub: hubRequests.Wrap(hub.Config), managed: claimRequests.Wrap(managed.Config)})

	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed,
		"API server ready (etcd ok)", "kube-controller-manager leader Lease fresh", "kube-scheduler leader Lease fresh")
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
	wantClaims := map[string]string{
		agentapi.ClaimNodes: "2", agentapi.ClaimNodesReady: "2",
		agentapi.ClaimCPUCapacity: "40", agentapi.ClaimCPUAllocatable: "39800m",
		agentapi.ClaimMemoryCapacity: "288Gi", agentapi.ClaimMemoryAllocatable: "287Gi",
		agentapi.ClaimPodsAllocatable: "220", agentapi.ClaimGPUCapacity: "4", agentapi.ClaimGPUAllocatable: "4",
	}
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		claims := claimsOnManaged(g, ctx)
		g.Expect(agentClaimValues(g, ctx)).To(Equal(wantClaims))
		g.Expect(claims).To(HaveKeyWithValue(foreign.Name, HaveField("Spec.Value", "AWS")), "somebody else's claim is kept")
		g.Expect(claims[foreign.Name].Labels).NotTo(HaveKey(agentapi.ClaimLabel))
		g.Expect(claims).To(HaveKeyWithValue(stale.Name, HaveField("Spec.Value", "x")), "a labelled claim of another name is kept")
		for name := range wantClaims {
			g.Expect(claims[name].Labels).To(HaveKeyWithValue(agentapi.ClaimLabel, agent.ClaimLabelValue))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// The framework's condition is untouched, and the agent owns exactly its
	// two conditions, through the status subresource.
	addon := getAddon(g, ctx, cluster)
	available := meta.FindStatusCondition(addon.Status.Conditions, "Available")
	g.Expect(available).NotTo(BeNil())
	g.Expect(available.LastTransitionTime.Time).To(BeTemporally("==", frameworkAvailable.LastTransitionTime.Time))
	available.LastTransitionTime = frameworkAvailable.LastTransitionTime
	g.Expect(*available).To(Equal(frameworkAvailable))
	var owned []string
	for _, entry := range addon.ManagedFields {
		if entry.Manager == agentapi.FieldManager {
			g.Expect(entry.Operation).To(Equal(metav1.ManagedFieldsOperationApply))
			g.Expect(entry.Subresource).To(Equal("status"))
			owned = append(owned, string(entry.FieldsV1.Raw))
		}
	}
	g.Expect(owned).To(HaveLen(1))
	g.Expect(owned[0]).To(ContainSubstring(`k:{\"type\":\"ControlPlaneHealthy\"}`))
	g.Expect(owned[0]).To(ContainSubstring(`k:{\"type\":\"AllNodesHealthy\"}`))
	g.Expect(owned[0]).NotTo(ContainSubstring(`Available`))

	// The addon lease the klusterlet judges availability from is kept.
	g.Eventually(func(g Gomega) {
		g.Expect(addonLease(g, ctx).Spec.RenewTime).NotTo(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Nothing changes: nothing is written, on the hub or to the claims.
	hubWrites, claimWrites := hubRequests.Writes(), claimRequests.Writes()
	g.Consistently(func() []int { return []int{hubRequests.Writes(), claimRequests.Writes()} }, quiet, framework.Interval).
		Should(Equal([]int{hubWrites, claimWrites}), "writes while nothing changed")
	g.Expect(hubWrites).To(Equal(1), "one hub write for the first report: %v", hubRequests.Requests())

	// A restarted agent reads its conditions back and writes nothing.
	stop()
	restarted := framework.NewRequestCounter("managedclusteraddons", cluster)
	startAgent(t, agentRun{cluster: cluster, hub: restarted.Wrap(hub.Config)})
	g.Eventually(func() int { return restarted.ByMethod()["GET"] }, framework.Timeout, framework.Interval).Should(BeNumerically(">=", 1))
	g.Consistently(restarted.Writes, quiet, framework.Interval).Should(BeZero(), "writes after a restart: %v", restarted.Requests())
}

func TestControlPlaneHealth(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "control-plane"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("cp-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	managedAPI := &switchable{}
	startAgent(t, agentRun{cluster: cluster, managed: managedAPI.wrap(managed.Config)})
	passed := expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed)

	// The scheduler stops renewing its Lease.
	flip := nextSecond()
	stalled := time.Now().Add(-10 * time.Minute)
	putLease(ctx, t, agent.Scheduler, stalled)
	failed := expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionFalse, agentapi.ReasonAgentChecksFailed,
		"Failing: kube-scheduler (leader Lease last renewed "+stalled.UTC().Format(time.RFC3339)+", stale after 1m0s)")
	NewWithT(t).Expect(failed.Message).NotTo(ContainSubstring(agent.ControllerManager))
	NewWithT(t).Expect(passed.LastTransitionTime.Time).To(BeTemporally("<", flip))
	NewWithT(t).Expect(failed.LastTransitionTime.Time).To(BeTemporally(">=", flip))

	// The API server reports failing checks (envtest's own never fail, so
	// the transport answers for it).
	report := "[+]ping ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n" +
		"[-]poststarthook/start-apiextensions-informers failed: reason withheld\nreadyz check failed\n"
	managedAPI.readyz.Store(&report)
	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionFalse, agentapi.ReasonAgentChecksFailed,
		"API server readyz checks etcd, poststarthook/start-apiextensions-informers", "kube-scheduler (leader Lease last renewed")
	managedAPI.readyz.Store(nil)

	// A managed control plane shows no Leases: unobserved, not unhealthy.
	deleteLease(ctx, t, agent.ControllerManager)
	deleteLease(ctx, t, agent.Scheduler)
	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPartiallyObserved,
		"API server ready (etcd ok)", "Not observed: kube-controller-manager (no Lease kube-system/kube-controller-manager); "+
			"kube-scheduler (no Lease kube-system/kube-scheduler)")

	// The Leases come back fresh.
	freshControlPlane(ctx, t)
	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed)
}

func TestNodeHealth(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "nodes"
	createAddon(ctx, t, cluster)
	for _, name := range []string{"nodes-a", "nodes-b", "nodes-c"} {
		createNode(ctx, t, agenttest.MakeNode(name).Capacity("4", "16Gi", "110"))
	}
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	stop := startAgent(t, agentRun{cluster: cluster})
	healthy := expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
	g := NewWithT(t)

	flip := nextSecond()
	setNodeCondition(ctx, t, "nodes-c", corev1.NodeReady, corev1.ConditionFalse)
	notReady := expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionFalse, agentapi.ReasonAgentNodesUnhealthy,
		"1 unhealthy (tolerance 0): nodes-c (NotReady)")
	g.Expect(healthy.LastTransitionTime.Time).To(BeTemporally("<", flip))
	g.Expect(notReady.LastTransitionTime.Time).To(BeTemporally(">=", flip))
	g.Eventually(func(g Gomega) {
		g.Expect(agentClaimValues(g, ctx)).To(HaveKeyWithValue(agentapi.ClaimNodesReady, "2"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// A second node under pressure: still False, a new message, the same
	// transition time.
	nextSecond()
	setNodeCondition(ctx, t, "nodes-b", corev1.NodeMemoryPressure, corev1.ConditionTrue)
	pressure := expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionFalse, agentapi.ReasonAgentNodesUnhealthy,
		"2 unhealthy (tolerance 0): nodes-b (MemoryPressure), nodes-c (NotReady)")
	g.Expect(pressure.LastTransitionTime.Time).To(BeTemporally("==", notReady.LastTransitionTime.Time))

	// With a tolerance of one, one unhealthy node is fine, two are not.
	stop()
	startAgent(t, agentRun{cluster: cluster, tolerance: 1})
	setNodeCondition(ctx, t, "nodes-b", corev1.NodeMemoryPressure, corev1.ConditionFalse)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy,
		"No more than 1 nodes are not Ready or under memory, disk or PID pressure")
	setNodeCondition(ctx, t, "nodes-a", corev1.NodeDiskPressure, corev1.ConditionTrue)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionFalse, agentapi.ReasonAgentNodesUnhealthy,
		"2 unhealthy (tolerance 1): nodes-a (DiskPressure), nodes-c (NotReady)")
}

// TestANodeChangeStartsARound: with a period of an hour, a node joining,
// turning NotReady and leaving are each reported (claims and
// AllNodesHealthy) within the test's timeout: the agent's node watch starts
// a round, and a write the floor held back goes out when the floor allows.
func TestANodeChangeStartsARound(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "node-events"
	createAddon(ctx, t, cluster)
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	nodes := func() string {
		list, err := managedKube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return strconv.Itoa(len(list.Items))
	}
	before := nodes()
	startAgent(t, agentRun{cluster: cluster, period: time.Hour, floor: 2 * time.Second})
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(agentClaimValues(g, ctx)).To(HaveKeyWithValue(agentapi.ClaimNodes, before))
	}, framework.Timeout, framework.Interval).Should(Succeed(), "the first round")

	createNode(ctx, t, agenttest.MakeNode("node-events-joining").Capacity("4", "16Gi", "110"))
	joined := nodes()
	g.Eventually(func(g Gomega) {
		g.Expect(agentClaimValues(g, ctx)).To(HaveKeyWithValue(agentapi.ClaimNodes, joined))
	}, framework.Timeout, framework.Interval).Should(Succeed(), "a node joining, an hour before the next period")

	setNodeCondition(ctx, t, "node-events-joining", corev1.NodeReady, corev1.ConditionFalse)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionFalse, agentapi.ReasonAgentNodesUnhealthy,
		"1 unhealthy (tolerance 0): node-events-joining (NotReady)")

	g.Expect(managedKube.CoreV1().Nodes().Delete(ctx, "node-events-joining", metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(agentClaimValues(g, ctx)).To(HaveKeyWithValue(agentapi.ClaimNodes, before))
	}, framework.Timeout, framework.Interval).Should(Succeed(), "a node leaving")
}

func TestLeastPrivilegeHubIdentity(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster, other = "least-privilege", "least-privilege-other"
	createAddon(ctx, t, cluster)
	createAddon(ctx, t, other)
	createNode(ctx, t, agenttest.MakeNode("lp-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)

	// Exactly what the agent needs on the hub: its own addon's status.
	user := "system:open-cluster-management:cluster:" + cluster + ":addon:" + agentapi.AddonName + ":agent:agent"
	grantAddonStatus(ctx, t, cluster, user)
	agentHub := userConfig(t, hub, user)

	startAgent(t, agentRun{cluster: cluster, hub: agentHub})
	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)

	// The same identity cannot write another cluster's addon status.
	asAgent, err := addonclientset.NewForConfig(agentHub)
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"status":{"conditions":[{"type":"ControlPlaneHealthy","status":"True","reason":"AgentChecksPassed",` +
		`"message":"forged","lastTransitionTime":"2026-01-02T03:04:05Z"}]}}`)
	_, err = asAgent.AddonV1beta1().ManagedClusterAddOns(other).Patch(ctx, agentapi.AddonName, types.MergePatchType, patch,
		metav1.PatchOptions{}, "status")
	NewWithT(t).Expect(apierrors.IsForbidden(err)).To(BeTrue(), "patching another cluster's addon status: %v", err)
	NewWithT(t).Expect(conditionOf(NewWithT(t), ctx, other, agentapi.ConditionControlPlaneHealthy)).To(BeNil())
}

func TestHubOutage(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "hub-outage"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("outage-a").Capacity("4", "16Gi", "110"))
	createNode(ctx, t, agenttest.MakeNode("outage-b").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	hubAPI := &switchable{}
	hubAPI.down.Store(true)
	startAgent(t, agentRun{cluster: cluster, hub: hubAPI.wrap(hub.Config)})

	// The agent keeps probing an unreachable hub; claims on the managed
	// cluster do not wait for it.
	g := NewWithT(t)
	g.Eventually(hubAPI.refused.Load, framework.Timeout, framework.Interval).Should(BeNumerically(">=", 3))
	g.Eventually(func(g Gomega) {
		g.Expect(agentClaimValues(g, ctx)).To(HaveKeyWithValue(agentapi.ClaimNodesReady, "2"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(conditionOf(g, ctx, cluster, agentapi.ConditionAllNodesHealthy)).To(BeNil())

	// The cluster changes during the outage; the hub gets the current state
	// once it is back.
	setNodeCondition(ctx, t, "outage-b", corev1.NodeReady, corev1.ConditionFalse)
	refused := hubAPI.refused.Load()
	g.Eventually(hubAPI.refused.Load, framework.Timeout, framework.Interval).Should(BeNumerically(">", refused+2))
	hubAPI.down.Store(false)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionFalse, agentapi.ReasonAgentNodesUnhealthy,
		"1 unhealthy (tolerance 0): outage-b (NotReady)")
	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed)
}

func TestManagedAPIUnreachable(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "managed-down"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("down-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	managedAPI := &switchable{}
	managedAPI.down.Store(true)
	hubRequests := framework.NewRequestCounter("managedclusteraddons", cluster)
	startAgent(t, agentRun{cluster: cluster, hub: hubRequests.Wrap(hub.Config), managed: managedAPI.wrap(managed.Config)})

	// No answer from the managed API server: nothing is reported at all.
	g := NewWithT(t)
	g.Eventually(managedAPI.refused.Load, framework.Timeout, framework.Interval).Should(BeNumerically(">=", 3))
	g.Consistently(hubRequests.Requests, quiet, framework.Interval).Should(BeEmpty())
	g.Expect(agentClaimValues(g, ctx)).To(BeEmpty())

	managedAPI.down.Store(false)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
	// The report is whole once no round has more to write (the first
	// rounds back may still complete the control plane's condition).
	var writes int
	g.Eventually(func() bool {
		before := hubRequests.Writes()
		time.Sleep(5 * testPeriod)
		writes = hubRequests.Writes()
		return writes == before
	}, framework.Timeout, framework.Interval).Should(BeTrue())

	// It goes away again while the node fails: the last report stands, no
	// guess replaces it.
	managedAPI.down.Store(true)
	setNodeCondition(ctx, t, "down-node", corev1.NodeReady, corev1.ConditionFalse)
	g.Consistently(hubRequests.Writes, quiet, framework.Interval).Should(Equal(writes))
	g.Expect(conditionOf(g, ctx, cluster, agentapi.ConditionAllNodesHealthy).Status).To(Equal(metav1.ConditionTrue))
	g.Expect(agentClaimValues(g, ctx)).To(HaveKeyWithValue(agentapi.ClaimNodesReady, "1"))
}

// The KEP's rule, at test scale: with a floor of 500ms, a node flapping every
// 50ms costs one hub write per floor at most, and the final state arrives.
func TestWritesAreSpacedByTheFloor(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "floor"
	const floor = 500 * time.Millisecond
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("floor-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	hubRequests := framework.NewRequestCounter("managedclusteraddons", cluster)
	startAgent(t, agentRun{cluster: cluster, hub: hubRequests.Wrap(hub.Config), floor: floor})
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy)

	start, before := time.Now(), hubRequests.Writes()
	ready := corev1.ConditionTrue
	for time.Since(start) < 2*time.Second {
		if ready == corev1.ConditionTrue {
			ready = corev1.ConditionFalse
		} else {
			ready = corev1.ConditionTrue
		}
		setNodeCondition(ctx, t, "floor-node", corev1.NodeReady, ready)
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(start)
	written := hubRequests.Writes() - before
	maxWrites := int(elapsed/floor) + 1
	NewWithT(t).Expect(written).To(And(BeNumerically(">=", 1), BeNumerically("<=", maxWrites)),
		"hub writes in %s with a %s floor: %v", elapsed, floor, hubRequests.Requests())
	want := map[corev1.ConditionStatus]metav1.ConditionStatus{corev1.ConditionTrue: metav1.ConditionTrue, corev1.ConditionFalse: metav1.ConditionFalse}[ready]
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(conditionOf(g, ctx, cluster, agentapi.ConditionAllNodesHealthy).Status).To(Equal(want))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestStopsWhenTheContextEnds(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "shutdown"
	createAddon(ctx, t, cluster)
	cleanUpClaims(t)
	stop := startAgent(t, agentRun{cluster: cluster})
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
	stop() // fails the test unless the agent's manager returns nil promptly
}

// nextSecond waits for the wall clock to enter a new second and returns
// it. Transition times have second precision: a test that wants to see one
// change makes the change in a later second than the previous transition.
func nextSecond() time.Time {
	next := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next))
	return next
}
