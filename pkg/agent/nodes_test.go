package agent

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

func nodes(wrappers ...*agenttest.NodeWrapper) []corev1.Node {
	out := make([]corev1.Node, 0, len(wrappers))
	for _, w := range wrappers {
		out = append(out, *w.Obj())
	}
	return out
}

const allReady = "Every node is Ready and under no memory, disk or PID pressure"

func tolerated(n int) string {
	return fmt.Sprintf("No more than %d nodes are not Ready or under memory, disk or PID pressure", n)
}

func TestNodesCondition(t *testing.T) {
	healthy := func(message string) metav1.Condition {
		return metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentNodesHealthy, Message: message}
	}
	unhealthy := func(message string) metav1.Condition {
		return metav1.Condition{Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentNodesUnhealthy, Message: message}
	}
	many := []*agenttest.NodeWrapper{}
	for i := range 8 {
		many = append(many, agenttest.MakeNode(fmt.Sprintf("node-%d", i)).NotReady())
	}
	cases := map[string]struct {
		nodes     []corev1.Node
		tolerance int
		wantReady int
		want      metav1.Condition
	}{
		"all ready": {
			nodes:     nodes(agenttest.MakeNode("a"), agenttest.MakeNode("b"), agenttest.MakeNode("c")),
			wantReady: 3,
			want:      healthy(allReady),
		},
		"one not ready": {
			nodes:     nodes(agenttest.MakeNode("c").NotReady(), agenttest.MakeNode("a"), agenttest.MakeNode("b")),
			wantReady: 2,
			want:      unhealthy("1 unhealthy (tolerance 0): c (NotReady)"),
		},
		"one not ready within the tolerance": {
			nodes:     nodes(agenttest.MakeNode("a"), agenttest.MakeNode("b"), agenttest.MakeNode("c").NotReady()),
			tolerance: 1, wantReady: 2,
			want: healthy(tolerated(1)),
		},
		"two unhealthy, one tolerated": {
			nodes: nodes(agenttest.MakeNode("a"), agenttest.MakeNode("b").Pressure(corev1.NodeMemoryPressure),
				agenttest.MakeNode("c").NotReady()),
			tolerance: 1, wantReady: 2,
			want: unhealthy("2 unhealthy (tolerance 1): b (MemoryPressure), c (NotReady)"),
		},
		"pressure of every kind": {
			nodes: nodes(agenttest.MakeNode("a").Pressure(corev1.NodeDiskPressure).Pressure(corev1.NodePIDPressure),
				agenttest.MakeNode("b").NotReady().Pressure(corev1.NodeMemoryPressure)),
			wantReady: 1,
			want:      unhealthy("2 unhealthy (tolerance 0): a (DiskPressure, PIDPressure), b (NotReady, MemoryPressure)"),
		},
		"ready unknown or missing is not ready": {
			nodes: nodes(agenttest.MakeNode("a").Condition(corev1.NodeReady, corev1.ConditionUnknown),
				agenttest.MakeNode("b").WithoutConditions()),
			tolerance: 2,
			want:      healthy(tolerated(2)),
		},
		"many unhealthy are counted, a few named": {
			nodes: nodes(many...),
			want: unhealthy("8 unhealthy (tolerance 0): node-0 (NotReady), node-1 (NotReady), " +
				"node-2 (NotReady), node-3 (NotReady), node-4 (NotReady) and 3 more"),
		},
		"no nodes": {
			want: healthy(allReady),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.want.Type = agentapi.ConditionAllNodesHealthy
			got, summary := NodesReport(tc.nodes, tc.tolerance)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if summary.Nodes != len(tc.nodes) || summary.Ready != tc.wantReady {
				t.Errorf("counted %d nodes, %d Ready; want %d, %d", summary.Nodes, summary.Ready, len(tc.nodes), tc.wantReady)
			}
		})
	}
}

// A scale event, or a node that comes and goes within the tolerance, leaves
// the condition as it was: the counts are facts under the write budget, and
// a changed condition would go out at once.
func TestNodesConditionStaysPutWhileNodesComeAndGo(t *testing.T) {
	for _, tolerance := range []int{0, 2} {
		var first metav1.Condition
		for i, fleet := range [][]*agenttest.NodeWrapper{
			{agenttest.MakeNode("a"), agenttest.MakeNode("b")},
			{agenttest.MakeNode("a"), agenttest.MakeNode("b"), agenttest.MakeNode("c"), agenttest.MakeNode("d")},
			{agenttest.MakeNode("a")},
		} {
			got, _ := NodesReport(nodes(fleet...), tolerance)
			if i == 0 {
				first = got
				continue
			}
			if diff := cmp.Diff(first, got); diff != "" {
				t.Errorf("tolerance %d, %d nodes: condition changed (-before +after):\n%s", tolerance, len(fleet), diff)
			}
		}
	}
}

// rendered shows a resource list as its canonical strings.
func rendered(list corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for name, q := range list {
		out[name] = q.String()
	}
	return out
}

func TestNodeCapacitySums(t *testing.T) {
	cases := map[string]struct {
		nodes           []corev1.Node
		wantCapacity    map[corev1.ResourceName]string
		wantAllocatable map[corev1.ResourceName]string
	}{
		"without GPUs": {
			nodes: nodes(
				agenttest.MakeNode("a").Capacity("4", "16Gi", "110").Allocatable("3500m", "15Gi", "110"),
				agenttest.MakeNode("b").Capacity("8", "32Gi", "110").Allocatable("7800m", "31Gi", "100"),
				agenttest.MakeNode("c").NotReady().Capacity("2", "8Gi", "110")),
			wantCapacity:    map[corev1.ResourceName]string{"cpu": "14", "memory": "56Gi", "pods": "330"},
			wantAllocatable: map[corev1.ResourceName]string{"cpu": "13300m", "memory": "54Gi", "pods": "320"},
		},
		"with GPUs on some nodes": {
			nodes: nodes(
				agenttest.MakeNode("cpu-only").Capacity("4", "16303452Ki", "110"),
				agenttest.MakeNode("gpu-1").Capacity("32", "256Gi", "110").GPUs("8", "8"),
				agenttest.MakeNode("gpu-2").Capacity("32", "256Gi", "110").GPUs("4", "3")),
			wantCapacity:    map[corev1.ResourceName]string{"cpu": "68", "memory": "553174364Ki", "pods": "330", "nvidia.com/gpu": "12"},
			wantAllocatable: map[corev1.ResourceName]string{"cpu": "68", "memory": "553174364Ki", "pods": "330", "nvidia.com/gpu": "11"},
		},
		"other extended resources are not summed": {
			nodes: nodes(func() *agenttest.NodeWrapper {
				w := agenttest.MakeNode("a").Capacity("1", "1Gi", "10")
				w.Status.Capacity["example.com/fpga"] = w.Status.Capacity[corev1.ResourceCPU]
				return w
			}()),
			wantCapacity:    map[corev1.ResourceName]string{"cpu": "1", "memory": "1Gi", "pods": "10"},
			wantAllocatable: map[corev1.ResourceName]string{"cpu": "1", "memory": "1Gi", "pods": "10"},
		},
		"no nodes": {
			wantCapacity:    map[corev1.ResourceName]string{},
			wantAllocatable: map[corev1.ResourceName]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, summary := NodesReport(tc.nodes, 0)
			if diff := cmp.Diff(tc.wantCapacity, rendered(summary.Capacity)); diff != "" {
				t.Errorf("capacity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAllocatable, rendered(summary.Allocatable)); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		})
	}
}
