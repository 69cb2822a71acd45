package mirror

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// Cleanup deletes the profiles this mirror published for managerName: those
// of that manager that carry the mirror's field manager. It runs when the
// ClusterProfile gate is off and the user asked for cleanup. Profiles of
// other managers, or of the same manager name written only by someone else
// (such as OCM's built-in mirror), are left alone.
func Cleanup(ctx context.Context, reader client.Reader, writer client.Writer, managerName string) (int, error) {
	list := &cpv1alpha1.ClusterProfileList{}
	if err := reader.List(ctx, list, client.MatchingLabels{clusterprofile.LabelClusterManager: managerName}); err != nil {
		return 0, fmt.Errorf("listing ClusterProfiles of %s: %w", managerName, err)
	}
	deleted := 0
	var errs []error
	for i := range list.Items {
		p := &list.Items[i]
		if !managedBy(p, managerName) || !profilewrite.WrittenBy(p, FieldManager) {
			continue
		}
		err := writer.Delete(ctx, p, client.Preconditions{UID: &p.UID})
		metrics.ProfileWrite(FieldManager, metrics.OpDelete, client.IgnoreNotFound(err))
		switch {
		case err == nil:
			deleted++
		case !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("deleting ClusterProfile %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return deleted, errors.Join(errs...)
}
