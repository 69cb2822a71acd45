package testing

import (
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// NewFakeClient is a fake client with the project's scheme and the same
// field indexes the manager's cache has, for unit tests of map functions and
// reconcilers (the wiring is covered by the integration tests).
func NewFakeClient(objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
		WithIndex(&cpv1alpha1.ClusterProfile{}, clusterprofile.IndexByName, clusterprofile.IndexProfileName).
		WithIndex(&clusterv1beta2.ManagedClusterSetBinding{}, membership.BindingClusterSetKey, membership.IndexBindingClusterSet).
		Build()
}
