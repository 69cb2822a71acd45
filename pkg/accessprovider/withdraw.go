package accessprovider

import (
	"context"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
)

// withdrawEntries removes a writer's entry (and condition) from every
// profile that carries it, and nothing else: it runs when the source's gate
// is off, so consumers do not keep using a way in that nobody maintains any
// more. reader must return managedFields (an API reader, not the cache); c
// is the manager's client.
func withdrawEntries(ctx context.Context, reader client.Reader, c client.Client, identity profilewrite.Identity) (int, error) {
	writer := clusterprofile.NewWriter(identity, c)
	listMaps, err := writer.ListMaps(ctx)
	if err != nil {
		return 0, err
	}
	return capability.EachListed(ctx, reader, &cpv1alpha1.ClusterProfileList{}, func(ctx context.Context, obj client.Object) (bool, error) {
		p := obj.(*cpv1alpha1.ClusterProfile)
		if !identity.Carries(p, listMaps) {
			return false, nil
		}
		return writer.Withdraw(ctx, reader, p)
	})
}
