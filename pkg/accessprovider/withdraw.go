package accessprovider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	cpclient "sigs.k8s.io/cluster-inventory-api/client/clientset/versioned/typed/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// Withdraw removes a source's entry (and condition) from every profile that
// carries it, and nothing else: it runs when the source's gate is off, so
// consumers do not keep using a way in that nobody maintains any more.
// reader must return managedFields (an API reader, not the cache).
func Withdraw(ctx context.Context, reader client.Reader, profiles cpclient.ClusterProfilesGetter, source Source) (int, error) {
	schema := &clusterprofile.SchemaReader{Reader: reader}
	listMaps, err := schema.StatusListsAreMaps(ctx)
	if err != nil {
		return 0, err
	}
	r := &Reconciler{source: source, applier: clusterprofile.Applier{Profiles: profiles, FieldManager: source.FieldManager()},
		recent: clusterprofile.NewRecentWrites()}
	withdrawn := 0
	var errs []error
	// Page through: this runs at every start with the gate off (the
	// default), and a hub may hold tens of thousands of profiles.
	list := &cpv1alpha1.ClusterProfileList{}
	for more := true; more; more = list.Continue != "" {
		if err := reader.List(ctx, list, client.Limit(withdrawPage), client.Continue(list.Continue)); err != nil {
			return withdrawn, fmt.Errorf("listing ClusterProfiles: %w", err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			if !carries(p, source, listMaps) {
				continue
			}
			written, err := r.withdrawFrom(ctx, reader, p, listMaps)
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

const withdrawPage = 500

// withdrawFrom removes the entry from one profile. On atomic-list CRDs the
// write is a merge under optimistic lock, and the other writers starting at
// the same time make conflicts likely: they are retried on a fresh read, as
// this runs only once.
func (r *Reconciler) withdrawFrom(ctx context.Context, reader client.Reader, p *cpv1alpha1.ClusterProfile, listMaps bool) (bool, error) {
	written := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var err error
		written, err = r.write(ctx, p, Desired{}, listMaps)
		if apierrors.IsConflict(err) {
			fresh := &cpv1alpha1.ClusterProfile{}
			if getErr := reader.Get(ctx, client.ObjectKeyFromObject(p), fresh); getErr != nil {
				return getErr
			}
			p = fresh
		}
		return err
	})
	return written, err
}

// carries tells whether the profile holds something of the source's. On
// list-map CRDs managedFields says so: the source applied its status. On
// atomic ones it cannot: whoever wrote a list last owns all of it, so the
// source's merge entry vanishes as soon as another writer merges; there the
// entry's name (and the source's condition types) is all there is to go by.
func carries(p *cpv1alpha1.ClusterProfile, source Source, listMaps bool) bool {
	if listMaps {
		return clusterprofile.WrittenBy(p, source.FieldManager(), "status")
	}
	for _, ap := range p.Status.AccessProviders {
		if ap.Name == source.EntryName() {
			return true
		}
	}
	for _, c := range p.Status.Conditions {
		if slices.Contains(source.ConditionTypes(), c.Type) {
			return true
		}
	}
	return false
}
