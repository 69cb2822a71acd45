package accessprovider

import (
	"context"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/builder"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// Published are the entries a set of sources publish: what the credential
// syncer records on token copies as the servers a token may be sent to. It
// asks each source exactly what its controller writes, so the two cannot
// drift apart.
type Published []Source

// Entries are the sources' entries for profile, a profile the hub publishes.
func (p Published) Entries(ctx context.Context, profile *cpv1alpha1.ClusterProfile) ([]cpv1alpha1.AccessProvider, error) {
	var entries []cpv1alpha1.AccessProvider
	for _, source := range p {
		want, err := source.Desired(ctx, profile)
		if err != nil {
			return nil, err
		}
		if want.Entry != nil {
			entries = append(entries, *want.Entry)
		}
	}
	return entries, nil
}

// Watch adds every source's triggers, its upstream twin's switch included
// (which changes the entry a yielding source's twin publishes).
func (p Published) Watch(b *builder.Builder, profiles membership.ProfileMapper) *builder.Builder {
	for _, source := range p {
		b = source.Twin().Watch(source.Watch(b, profiles), profiles.All)
	}
	return b
}
