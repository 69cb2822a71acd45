//go:build linux

package ocmlocal

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RegisterNode creates a Ready Node with the given capacity, as a kubelet
// registers its node, so that what reads nodes (this bundle's agent) sees a
// cluster with capacity. Nothing runs on it: the harness's kubelet runs
// pods on the host. No node lifecycle controller runs here, so the node
// stays Ready without heartbeats.
func (c *ManagedCluster) RegisterNode(ctx context.Context, name, cpu, memory string) error {
	cs, err := c.Clientset()
	if err != nil {
		return err
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("registering node %s on %s: %w", name, c.Name, err)
	}
	now := metav1.Now()
	node.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "registered by the ocmlocal harness", LastHeartbeatTime: now, LastTransitionTime: now}},
	}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("status of node %s on %s: %w", name, c.Name, err)
	}
	return nil
}
