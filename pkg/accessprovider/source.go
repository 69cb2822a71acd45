package accessprovider

import (
	"context"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/builder"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// Source is one kind of access provider entry. The generic Reconciler keeps
// a source's entry (and condition, if it has one) on every profile the hub
// publishes, as the source's own writer, so sources never touch each
// other's entries.
type Source interface {
	// Identity is who the source writes as: its field manager, its entry's
	// name and its condition types.
	Identity() profilewrite.Identity
	// Desired is what the source wants on profile, a published profile of
	// the cluster it is named after.
	Desired(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (Desired, error)
	// Watch adds the source's own triggers to the controller.
	Watch(b *builder.Builder, profiles membership.ProfileMapper) *builder.Builder
	// Twin is the upstream writer of the same entry, to which the source
	// yields while it is enabled; nil when there is none.
	Twin() *coexistence.TwinWatch
}
