package accessprovider

import (
	"context"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
)

// Source is one kind of access provider entry. The generic Reconciler keeps
// a source's entry (and condition, if it has one) on every profile, under the
// source's own field manager, so sources never touch each other's entries.
type Source interface {
	// EntryName is the entry's name in status.accessProviders.
	EntryName() string
	// FieldManager owns the entry.
	FieldManager() string
	// ConditionTypes are the conditions the source writes besides its entry.
	ConditionTypes() []string
	// Desired is what the source wants on the profile of cluster.
	Desired(ctx context.Context, profile *cpv1alpha1.ClusterProfile, cluster string) (Desired, error)
	// Watch adds the source's own triggers to the controller.
	Watch(b *builder.Builder, profiles *profileMapper) *builder.Builder
}
