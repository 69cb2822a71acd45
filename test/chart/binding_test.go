package chart_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// TestTheChartsOwnBindingPublishesNothing: the agent's global binding in
// the release namespace exists for Placement only. Read by the very rule
// the mirror, the access providers and the syncer use, even once OCM has
// marked it Bound it publishes no profile, entry or token copy there.
func TestTheChartsOwnBindingPublishesNothing(t *testing.T) {
	objects := render(t, defaultRelease, gates{agent: true}.values(false))
	rendered := find(objects, "ManagedClusterSetBinding", "global")
	if rendered == nil {
		t.Fatal("the agent gate renders no global ManagedClusterSetBinding")
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, binding); err != nil {
		t.Fatal(err)
	}
	binding.Status.Conditions = []metav1.Condition{{Type: clusterv1beta2.ClusterSetBindingBoundType, Status: metav1.ConditionTrue}}
	if membership.Publishes(binding) {
		t.Errorf("the chart's global binding in %s publishes; it must carry %s: \"false\"",
			binding.Namespace, membership.AnnotationPublish)
	}
}
