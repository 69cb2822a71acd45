package agent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
)

// TestNodeEventMatters: a node joining or leaving, or changing its health
// or its resources, asks for a round; a heartbeat (the same summary) and a
// bookmark do not.
func TestNodeEventMatters(t *testing.T) {
	ready := agenttest.MakeNode("a").Capacity("4", "16Gi", "110").Obj()
	heartbeat := ready.DeepCopy()
	heartbeat.ResourceVersion = "2"
	notReady := ready.DeepCopy()
	for i := range notReady.Status.Conditions {
		if notReady.Status.Conditions[i].Type == corev1.NodeReady {
			notReady.Status.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	bigger := agenttest.MakeNode("a").Capacity("8", "16Gi", "110").Obj()

	seen := map[string]string{}
	steps := []struct {
		name  string
		event watch.Event
		want  bool
	}{
		{"a node joins", watch.Event{Type: watch.Added, Object: ready}, true},
		{"its heartbeat", watch.Event{Type: watch.Modified, Object: heartbeat}, false},
		{"it turns NotReady", watch.Event{Type: watch.Modified, Object: notReady}, true},
		{"it is Ready again", watch.Event{Type: watch.Modified, Object: ready}, true},
		{"it grows", watch.Event{Type: watch.Modified, Object: bigger}, true},
		{"a bookmark", watch.Event{Type: watch.Bookmark, Object: &corev1.Node{}}, false},
		{"it leaves", watch.Event{Type: watch.Deleted, Object: bigger}, true},
		{"a node the watch never saw changes", watch.Event{Type: watch.Modified, Object: heartbeat}, true},
	}
	for _, s := range steps {
		if got := nodeEventMatters(seen, s.event); got != s.want {
			t.Errorf("%s: nodeEventMatters = %t, want %t", s.name, got, s.want)
		}
	}
}
