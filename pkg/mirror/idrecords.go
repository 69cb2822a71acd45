package mirror

import (
	"context"
	"errors"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
)

// IndexIDRecordHolder indexes the id records by the cluster holding them.
const IndexIDRecordHolder = "idRecordHolder"

// IndexIDRecord is the IndexIDRecordHolder function.
func IndexIDRecord(obj client.Object) []string {
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return nil
	}
	if r, ok := RecordOf(lease); ok {
		return []string{r.Holder}
	}
	return nil
}

// newIDRecordsCache is a cache of the id records in namespace only,
// indexed by holder.
func newIDRecordsCache(ctx context.Context, mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	records, err := filteredcache.New(mgr, &coordinationv1.Lease{}, cache.ByObject{
		Namespaces: map[string]cache.Config{namespace: {}},
		Label:      labels.SelectorFromSet(labels.Set{LabelIDRecord: "true"}),
	})
	if err != nil {
		return nil, err
	}
	if err := fieldindex.ClusterWide(ctx, records, &coordinationv1.Lease{}, IndexIDRecordHolder, IndexIDRecord); err != nil {
		return nil, fmt.Errorf("indexing id records: %w", err)
	}
	return records, nil
}

// idRecords reads the record of the id the cluster asks for and the
// records the cluster named name holds.
func (r *Reconciler) idRecords(ctx context.Context, name string, cluster *clusterv1.ManagedCluster) ([]IDRecord, error) {
	if r.records == nil {
		return nil, nil
	}
	var records []IDRecord
	if cluster != nil {
		want := wantedID(cluster)
		lease, err := optional.Get(ctx, r.records, types.NamespacedName{Namespace: r.namespace, Name: IDRecordName(want)}, &coordinationv1.Lease{})
		if err != nil {
			return nil, fmt.Errorf("reading the record of cluster id %q: %w", want, err)
		}
		if lease != nil {
			if record, ok := RecordOf(lease); ok && record.ID == want {
				records = append(records, record)
			}
		}
	}
	held := &coordinationv1.LeaseList{}
	if err := r.records.List(ctx, held, client.MatchingFields{IndexIDRecordHolder: name}); err != nil {
		return nil, fmt.Errorf("listing the id records of %s: %w", name, err)
	}
	for i := range held.Items {
		if record, ok := RecordOf(&held.Items[i]); ok && !containsRecord(records, record) {
			records = append(records, record)
		}
	}
	return records, nil
}

func containsRecord(records []IDRecord, r IDRecord) bool {
	for _, have := range records {
		if have == r {
			return true
		}
	}
	return false
}

// settleIDRecords deletes the records the cluster named name releases and
// creates the one it takes. A record another cluster created first fails
// the take: the reconcile is retried and then finds that cluster the holder.
func (r *Reconciler) settleIDRecords(ctx context.Context, name string, decision IDDecision) error {
	if r.records == nil {
		return nil
	}
	var errs []error
	for _, id := range decision.Release {
		ctrl.LoggerFrom(ctx).V(2).Info("Releasing a cluster id", "id", id)
		lease := &coordinationv1.Lease{}
		lease.Namespace, lease.Name = r.namespace, IDRecordName(id)
		if err := client.IgnoreNotFound(r.client.Delete(ctx, lease)); err != nil {
			errs = append(errs, fmt.Errorf("releasing cluster id %q of %s: %w", id, name, err))
		}
	}
	if decision.Take != "" {
		ctrl.LoggerFrom(ctx).V(2).Info("Recording a cluster id", "id", decision.Take)
		err := r.client.Create(ctx, idRecordLease(r.namespace, IDRecord{ID: decision.Take, Holder: name}))
		switch {
		case apierrors.IsAlreadyExists(err):
			errs = append(errs, fmt.Errorf("cluster id %q of %s was recorded for another cluster first; retrying", decision.Take, name))
		case err != nil:
			errs = append(errs, fmt.Errorf("recording cluster id %q of %s: %w", decision.Take, name, err))
		}
	}
	return errors.Join(errs...)
}

// clustersOfIDRecord maps an id record to its holder and to the clusters
// that may ask for its id (named so, or claiming it): a record that comes or
// goes decides whether they may publish it.
func (r *Reconciler) clustersOfIDRecord(ctx context.Context, obj client.Object) []reconcile.Request {
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return nil
	}
	record, ok := RecordOf(lease)
	if !ok {
		return nil
	}
	names := sets.New(record.Holder)
	candidates := &clusterv1.ManagedClusterList{}
	if err := r.client.List(ctx, candidates, client.MatchingFields{IndexClusterIDCandidate: record.ID}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusters that may hold an id", "id", record.ID)
	}
	for i := range candidates.Items {
		names.Insert(candidates.Items[i].Name)
	}
	return requestsFor(names)
}
