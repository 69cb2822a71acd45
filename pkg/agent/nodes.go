package agent

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// ResourceGPU is the extended resource NVIDIA's device plugin advertises.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// SummedResources are the node resources the agent adds up.
var SummedResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, ResourceGPU}

// NodeSummary is what the agent learns from the nodes.
type NodeSummary struct {
	Nodes int
	Ready int
	// Capacity and Allocatable sum SummedResources over every node, Ready or
	// not, as the klusterlet does. A resource no node reports is absent.
	Capacity    corev1.ResourceList
	Allocatable corev1.ResourceList
}

// nodesNamedInMessage caps the node list in a message: enough to act on,
// short enough to stay stable and readable on a large cluster.
const nodesNamedInMessage = 5

// pressureConditions make a node unhealthy when True.
var pressureConditions = []corev1.NodeConditionType{
	corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
}

// NodesReport judges the nodes: AllNodesHealthy is False when more than
// tolerance nodes are not Ready or under memory, disk or PID pressure, and
// its message then names them. The condition has no transition time;
// PlanConditions sets it.
func NodesReport(nodes []corev1.Node, tolerance int) (metav1.Condition, NodeSummary) {
	sorted := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		sorted[i] = &nodes[i]
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	summary := NodeSummary{Nodes: len(nodes), Capacity: corev1.ResourceList{}, Allocatable: corev1.ResourceList{}}
	var unhealthy []string
	for _, node := range sorted {
		problems := nodeProblems(node)
		if len(problems) == 0 || problems[0] != "NotReady" {
			summary.Ready++
		}
		if len(problems) > 0 {
			unhealthy = append(unhealthy, node.Name+" ("+strings.Join(problems, ", ")+")")
		}
		addResources(summary.Capacity, node.Status.Capacity)
		addResources(summary.Allocatable, node.Status.Allocatable)
	}

	c := metav1.Condition{Type: agentapi.ConditionAllNodesHealthy, Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentNodesHealthy,
		Message: healthyMessage(tolerance)}
	if len(unhealthy) > tolerance {
		c.Status, c.Reason = metav1.ConditionFalse, agentapi.ReasonAgentNodesUnhealthy
		c.Message = fmt.Sprintf("%d unhealthy (tolerance %d): %s", len(unhealthy), tolerance, listSome(unhealthy))
	}
	return c, summary
}

// healthyMessage is the message of a True AllNodesHealthy. It names no
// count: the counts drift with every scale event, and a condition goes out
// at once, so they are facts (the claims) under the write budget instead.
func healthyMessage(tolerance int) string {
	if tolerance == 0 {
		return "Every node is Ready and under no memory, disk or PID pressure"
	}
	return fmt.Sprintf("No more than %d nodes are not Ready or under memory, disk or PID pressure", tolerance)
}

// nodeProblems lists why a node is unhealthy, NotReady first. A node whose
// Ready condition is missing or Unknown is NotReady, as kubectl shows it.
func nodeProblems(node *corev1.Node) []string {
	var problems []string
	if conditionStatus(node, corev1.NodeReady) != corev1.ConditionTrue {
		problems = append(problems, "NotReady")
	}
	for _, pressure := range pressureConditions {
		if conditionStatus(node, pressure) == corev1.ConditionTrue {
			problems = append(problems, string(pressure))
		}
	}
	return problems
}

func conditionStatus(node *corev1.Node, t corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

func addResources(sum, add corev1.ResourceList) {
	for _, name := range SummedResources {
		q, ok := add[name]
		if !ok {
			continue
		}
		total := sum[name]
		total.Add(q)
		sum[name] = total
	}
}

// listSome names the first few items and counts the rest.
func listSome(items []string) string {
	if len(items) <= nodesNamedInMessage {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:nodesNamedInMessage], ", "), len(items)-nodesNamedInMessage)
}
