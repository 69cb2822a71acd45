// Package agenttest has fluent builders for the objects the agent's tests
// create: nodes with conditions and capacities, and leader Leases.
package agenttest

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceGPU is NVIDIA's extended resource.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// NodeWrapper builds a Node.
type NodeWrapper struct{ corev1.Node }

// MakeNode starts a Node named name that is Ready and under no pressure.
func MakeNode(name string) *NodeWrapper {
	w := &NodeWrapper{corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	return w.Condition(corev1.NodeReady, corev1.ConditionTrue).
		Condition(corev1.NodeMemoryPressure, corev1.ConditionFalse).
		Condition(corev1.NodeDiskPressure, corev1.ConditionFalse).
		Condition(corev1.NodePIDPressure, corev1.ConditionFalse)
}

// Obj returns the built object.
func (w *NodeWrapper) Obj() *corev1.Node { return &w.Node }

// Condition sets a node condition, replacing one of the same type.
func (w *NodeWrapper) Condition(t corev1.NodeConditionType, status corev1.ConditionStatus) *NodeWrapper {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == t {
			w.Status.Conditions[i].Status = status
			return w
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, corev1.NodeCondition{
		Type: t, Status: status, Reason: "Test", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	})
	return w
}

// NotReady makes the Ready condition False.
func (w *NodeWrapper) NotReady() *NodeWrapper {
	return w.Condition(corev1.NodeReady, corev1.ConditionFalse)
}

// Pressure sets a pressure condition (MemoryPressure, DiskPressure, PIDPressure) True.
func (w *NodeWrapper) Pressure(t corev1.NodeConditionType) *NodeWrapper {
	return w.Condition(t, corev1.ConditionTrue)
}

// WithoutConditions drops every condition, as on a node whose kubelet never reported.
func (w *NodeWrapper) WithoutConditions() *NodeWrapper {
	w.Status.Conditions = nil
	return w
}

// Capacity sets the cpu, memory and pods capacity and, to the same values,
// the allocatable ones.
func (w *NodeWrapper) Capacity(cpu, memory, pods string) *NodeWrapper {
	w.Status.Capacity = resources(w.Status.Capacity, cpu, memory, pods)
	w.Status.Allocatable = resources(w.Status.Allocatable, cpu, memory, pods)
	return w
}

// Allocatable sets the cpu, memory and pods allocatable.
func (w *NodeWrapper) Allocatable(cpu, memory, pods string) *NodeWrapper {
	w.Status.Allocatable = resources(w.Status.Allocatable, cpu, memory, pods)
	return w
}

// GPUs sets the nvidia.com/gpu capacity and allocatable.
func (w *NodeWrapper) GPUs(capacity, allocatable string) *NodeWrapper {
	if w.Status.Capacity == nil {
		w.Status.Capacity = corev1.ResourceList{}
	}
	if w.Status.Allocatable == nil {
		w.Status.Allocatable = corev1.ResourceList{}
	}
	w.Status.Capacity[ResourceGPU] = resource.MustParse(capacity)
	w.Status.Allocatable[ResourceGPU] = resource.MustParse(allocatable)
	return w
}

func resources(list corev1.ResourceList, cpu, memory, pods string) corev1.ResourceList {
	if list == nil {
		list = corev1.ResourceList{}
	}
	list[corev1.ResourceCPU] = resource.MustParse(cpu)
	list[corev1.ResourceMemory] = resource.MustParse(memory)
	list[corev1.ResourcePods] = resource.MustParse(pods)
	return list
}

// MakeLease builds a leader-election Lease renewed at renewed (none when zero).
func MakeLease(namespace, name string, renewed time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	holder, duration := name+"-leader", int32(15)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &holder, &duration
	if !renewed.IsZero() {
		l.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
	}
	return l
}
