package chart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/memlimit"
)

// TestTheManagerKnowsItsMemoryLimit: the manager's container passes its
// memory limit to the manager, which keeps its heap under 90% of it, and
// the chart's GOGC.
func TestTheManagerKnowsItsMemoryLimit(t *testing.T) {
	container := renderedManager(t, gates{mirror: true, credSyncer: true}.values(false))
	if diff := cmp.Diff(memoryEnv(container.Name), container.Env); diff != "" {
		t.Errorf("manager env (-want +got):\n%s", diff)
	}
	if container.Resources.Limits.Memory().IsZero() {
		t.Error("the chart sets no memory limit by default, so the soft limit would follow the node's memory")
	}
}

// TestGoMemoryLimitSetsTheSoftLimit: goMemoryLimit reaches the manager as
// GOMEMLIMIT, which the manager leaves as it is (memlimit.Soft), and a value
// Go would not read is refused at install.
func TestGoMemoryLimitSetsTheSoftLimit(t *testing.T) {
	values := gates{mirror: true}.values(false)
	values["goMemoryLimit"] = "230MiB"
	container := renderedManager(t, values)
	want := append(memoryEnv(container.Name), corev1.EnvVar{Name: "GOMEMLIMIT", Value: "230MiB"})
	if diff := cmp.Diff(want, container.Env); diff != "" {
		t.Errorf("manager env (-want +got):\n%s", diff)
	}
	values["goMemoryLimit"] = "230M"
	if _, err := chartrender.Render(loadChart(t), defaultRelease, values); err == nil {
		t.Error("goMemoryLimit 230M (not a Go size: M is not a unit of GOMEMLIMIT) was accepted")
	}
}

// renderedManager is the manager container the chart renders with values.
func renderedManager(t *testing.T, values map[string]any) corev1.Container {
	t.Helper()
	container := corev1.Container{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(
		managerContainer(t, render(t, defaultRelease, values)), &container); err != nil {
		t.Fatal(err)
	}
	return container
}

// memoryEnv is the manager's environment by default: its container's
// memory limit and the chart's GOGC.
func memoryEnv(containerName string) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: memlimit.EnvContainerLimit, ValueFrom: &corev1.EnvVarSource{
		ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: containerName, Resource: "limits.memory"}}},
		{Name: "GOGC", Value: "50"}}
}
