//go:build linux

package e2e

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kueue"
)

// multiKueueClusterGVK is the kind Kueue serves and stores (v0.16 on).
var multiKueueClusterGVK = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "MultiKueueCluster"}

// newMultiKueueCluster is a MultiKueueCluster that reaches a worker
// through its ClusterProfile in Kueue's namespace (spec.clusterSource.
// clusterProfileRef).
func newMultiKueueCluster(name, profile string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(multiKueueClusterGVK)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": profile}}}
	return u
}

// multiKueueClusterCondition returns a MultiKueueCluster's Active
// condition on the hub, or nil while Kueue has written none.
func multiKueueClusterCondition(ctx context.Context, hub client.Client, name string) (*metav1.Condition, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(multiKueueClusterGVK)
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, u); err != nil {
		return nil, err
	}
	return kueue.StatusCondition(u, "Active")
}
