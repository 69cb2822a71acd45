package accessprovider

import (
	"context"
	"errors"
	"fmt"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
)

// withdrawPage bounds each list: this runs at every start with a gate off
// (the default), and a hub may hold tens of thousands of profiles.
const withdrawPage = 500

// Withdraw removes a writer's entry (and condition) from every profile that
// carries it, and nothing else: it runs when the source's gate is off, so
// consumers do not keep using a way in that nobody maintains any more.
// reader must return managedFields (an API reader, not the cache); c is the
// manager's client.
func Withdraw(ctx context.Context, reader client.Reader, c client.Client, identity profilewrite.Writer) (int, error) {
	writer := clusterprofile.NewWriter(identity, c)
	listMaps, err := writer.ListMaps(ctx)
	if err != nil {
		return 0, err
	}
	withdrawn := 0
	var errs []error
	list := &cpv1alpha1.ClusterProfileList{}
	for more := true; more; more = list.Continue != "" {
		if err := reader.List(ctx, list, client.Limit(withdrawPage), client.Continue(list.Continue)); err != nil {
			return withdrawn, fmt.Errorf("listing ClusterProfiles: %w", err)
		}
		for i := range list.Items {
			if !identity.Carries(&list.Items[i], listMaps) {
				continue
			}
			written, err := writer.Withdraw(ctx, reader, &list.Items[i])
			if err != nil {
				errs = append(errs, err)
			}
			if written {
				withdrawn++
			}
		}
	}
	return withdrawn, errors.Join(errs...)
}
