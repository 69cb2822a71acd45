package accessprovider

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
)

// DirectIdentity is who the direct source writes as, its entry named name.
func DirectIdentity(name string) profilewrite.Identity {
	return profilewrite.Identity{FieldManager: DirectFieldManager, AccessProviders: []string{name},
		ConditionTypes: []string{ConditionDirectAccess}}
}

// NewDirect is the direct source on mgr.
func NewDirect(mgr ctrl.Manager, opts Options) *Direct {
	if opts.DirectEntryName == "" {
		opts.DirectEntryName = DefaultDirectEntryName
	}
	return &Direct{Reader: mgr.GetClient(), Name: opts.DirectEntryName, Now: time.Now}
}

// Direct is the direct source: an entry that reaches the cluster's own API
// server, for hubs that can, saving the proxy hop.
type Direct struct {
	// Reader reads ManagedClusters (the manager's cache).
	Reader client.Reader
	// Name is the entry's name.
	Name string
	// Now is the clock of the refusal condition's transition time
	// (time.Now when nil).
	Now func() time.Time
}

func (d *Direct) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

var _ Source = (*Direct)(nil)

func (d *Direct) Identity() profilewrite.Identity { return DirectIdentity(d.Name) }

// Twin: nothing upstream writes the direct entry.
func (d *Direct) Twin() *coexistence.TwinWatch { return nil }

// Desired is the entry built from the cluster's first client config.
func (d *Direct) Desired(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (Desired, error) {
	mc, err := optional.Get(ctx, d.Reader, types.NamespacedName{Name: profile.Name}, &clusterv1.ManagedCluster{})
	if err != nil {
		return Desired{}, fmt.Errorf("reading ManagedCluster %s: %w", profile.Name, err)
	}
	if mc == nil {
		return Desired{}, nil
	}
	return DirectDesired(d.Name, mc, profile.Status.Conditions, d.now()), nil
}

// Watch maps a ManagedCluster's client config changes to its profiles.
func (d *Direct) Watch(b *builder.Builder, profiles membership.ProfileMapper) *builder.Builder {
	return b.Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(profiles.OfCluster),
		builder.WithPredicates(predicate.GenerationChangedPredicate{}))
}
