package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

func TestUnhealthyChangesACopy(t *testing.T) {
	healthy := metav1.Condition{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionTrue, Reason: "Available"}
	joined := metav1.Condition{Type: "Joined", Status: metav1.ConditionTrue, Reason: "Joined"}
	world := []metav1.Condition{joined, healthy}
	got, err := unhealthy(world, "BenchFloor7")
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.Condition{joined, {Type: healthy.Type, Status: metav1.ConditionFalse, Reason: "BenchFloor7"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metav1.Condition{joined, healthy}, world); diff != "" {
		t.Errorf("the world's conditions changed (-want +got):\n%s", diff)
	}
	if _, err := unhealthy([]metav1.Condition{joined}, "x"); err == nil {
		t.Error("no ControlPlaneHealthy: want an error")
	}
}
