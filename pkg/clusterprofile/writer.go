package clusterprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

// Writer is the one way this project writes ClusterProfiles: one writer's
// share of them (see profilewrite.Identity), planned by profilewrite.Plan
// against the installed CRD and sent under the writer's field manager.
// Every write is counted, and its response kept until the informer delivers
// it (RecentWrites), so the writer neither re-sends it nor re-runs on its
// echo; kept compacted as the cache keeps it (a cold start has thousands of
// writes in flight, each response a whole profile with every writer's
// managedFields). A withdrawal is the same write with an empty desire.
//
// Applies go through pkg/util/ssa with profilewrite's payloads, which carry
// only the fields the writer owns.
type Writer struct {
	identity profilewrite.Identity
	client   client.Client
	schema   *SchemaReader
	recent   *RecentWrites
	shared   *Shared
}

// NewWriter builds the writer identity writes as, through c: a manager's
// client, whose reads (of the CRD) come from the cache and whose writes go
// to the API server.
func NewWriter(identity profilewrite.Identity, c client.Client) *Writer {
	return &Writer{identity: identity, client: c, schema: &SchemaReader{Reader: c}, recent: NewRecentWrites(), shared: NewShared()}
}

// Identity is who the writer writes as.
func (w *Writer) Identity() profilewrite.Identity { return w.identity }

// ListMaps tells whether the installed CRD's status lists are list-maps.
func (w *Writer) ListMaps(ctx context.Context) (bool, error) { return w.schema.StatusListsAreMaps(ctx) }

// Plan returns the write that brings current to desire on the installed
// CRD, nil when nothing would change.
func (w *Writer) Plan(ctx context.Context, current *cpv1alpha1.ClusterProfile, desire profilewrite.Desire) (*profilewrite.Write, error) {
	listMaps, err := w.ListMaps(ctx)
	if err != nil {
		return nil, err
	}
	return profilewrite.Plan(current, desire, listMaps, w.identity)
}

// Execute sends a planned write and returns the profile as stored. A new
// profile gets its metadata first (the apply creates it); an existing one
// its status first, then its metadata, so that on atomic-list CRDs the
// record of the properties the writer owns drops a name only once the
// property is gone; names it adds are recorded before (write.PropertyRecord).
func (w *Writer) Execute(ctx context.Context, write *profilewrite.Write) (*cpv1alpha1.ClusterProfile, error) {
	current := write.Current
	if current == nil {
		created, err := w.applyMeta(ctx, *write.Meta, metrics.OpCreate)
		if err != nil || write.Status == nil {
			return created, err
		}
		return w.writeStatus(ctx, created, *write.Status)
	}
	if write.PropertyRecord != nil {
		recorded, err := w.applyMeta(ctx, *write.PropertyRecord, metrics.OpMetadata)
		if err != nil {
			return nil, err
		}
		current = recorded
	}
	if write.Status != nil {
		written, err := w.writeStatus(ctx, current, *write.Status)
		if err != nil {
			return nil, err
		}
		current = written
	}
	if write.Meta != nil {
		return w.applyMeta(ctx, *write.Meta, metrics.OpMetadata)
	}
	return current, nil
}

// Delete deletes p, if it is still the object read.
func (w *Writer) Delete(ctx context.Context, p *cpv1alpha1.ClusterProfile) error {
	err := w.client.Delete(ctx, p.DeepCopy(), client.Preconditions{UID: &p.UID})
	metrics.ProfileWrite(w.identity.FieldManager, metrics.OpDelete, client.IgnoreNotFound(err))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting ClusterProfile %s/%s: %w", p.Namespace, p.Name, err)
	}
	w.recent.Deleted(p)
	return nil
}

// Withdraw removes the writer's share of p's status, and nothing else,
// telling whether it wrote. Write conflicts (atomic-list CRDs, other
// writers at work) are retried on a fresh read from reader.
func (w *Writer) Withdraw(ctx context.Context, reader client.Reader, p *cpv1alpha1.ClusterProfile) (bool, error) {
	written := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		write, err := w.Plan(ctx, p, profilewrite.Desire{Status: profilewrite.StatusApply{NamespacedName: client.ObjectKeyFromObject(p)}})
		if err != nil || write == nil {
			return err
		}
		_, err = w.Execute(ctx, write)
		if apierrors.IsConflict(err) {
			fresh := &cpv1alpha1.ClusterProfile{}
			if getErr := reader.Get(ctx, client.ObjectKeyFromObject(p), fresh); getErr != nil {
				return getErr
			}
			p = fresh
		}
		written = err == nil
		return err
	})
	return written, err
}

// RemoveEntry removes the access provider entry name from p's status,
// whoever wrote it last, and nothing else: an entry this project's rules do
// not allow on p that another writer (an upstream twin, whoever may write
// the status) owns, which a withdrawal (Withdraw, an apply) cannot take
// away. It is a JSON patch that tests p's resourceVersion and the entry's
// place first, so it removes exactly what was read; p changed since it was
// read fails it with a Conflict, as any stale write does. It returns the
// profile as stored, or p when it holds no such entry.
func (w *Writer) RemoveEntry(ctx context.Context, p *cpv1alpha1.ClusterProfile, name string) (*cpv1alpha1.ClusterProfile, error) {
	i := slices.IndexFunc(p.Status.AccessProviders, func(e cpv1alpha1.AccessProvider) bool { return e.Name == name })
	if i < 0 {
		return p, nil
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": p.ResourceVersion},
		{"op": "test", "path": fmt.Sprintf("/status/accessProviders/%d/name", i), "value": name},
		{"op": "remove", "path": fmt.Sprintf("/status/accessProviders/%d", i)},
	})
	if err != nil {
		return nil, err
	}
	patched := p.DeepCopy()
	err = w.client.Status().Patch(ctx, patched, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(w.identity.FieldManager))
	if apierrors.IsInvalid(err) {
		// The API server answers a failed test op as an invalid patch; the
		// patch is well-formed, so p changed since it was read.
		err = apierrors.NewConflict(cpv1alpha1.GroupVersion.WithResource("clusterprofiles").GroupResource(), p.Name, err)
	}
	return w.wrote(patched, metrics.OpStatus, err, fmt.Sprintf("removing entry %q from ClusterProfile %s/%s", name, p.Namespace, p.Name))
}

func (w *Writer) applyMeta(ctx context.Context, m profilewrite.MetaApply, op string) (*cpv1alpha1.ClusterProfile, error) {
	body, err := m.Body()
	if err != nil {
		return nil, err
	}
	p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
	err = ssa.Apply(ctx, w.client, p, json.RawMessage(body), w.identity.FieldManager)
	return w.wrote(p, op, err, "applying metadata of ClusterProfile "+m.NamespacedName.String())
}

// writeStatus sends a status write: the merged status, the apply, or on a
// CRD switched to list-maps the merged removal then the apply (see
// profilewrite.StatusWrite).
func (w *Writer) writeStatus(ctx context.Context, current *cpv1alpha1.ClusterProfile, s profilewrite.StatusWrite) (*cpv1alpha1.ClusterProfile, error) {
	if s.Merged != nil {
		merged, err := w.mergeStatus(ctx, current, *s.Merged)
		if err != nil || !s.AlsoApply {
			return merged, err
		}
		current = merged
	}
	if s.DryRunMayDrop != nil {
		if err := w.tryApply(ctx, current, s); err != nil {
			return nil, err
		}
	}
	p, err := w.applyStatus(ctx, s.Apply)
	if p == nil {
		return nil, err // nothing sent
	}
	return w.wrote(p, metrics.OpStatus, err, "applying status of ClusterProfile "+s.Apply.NamespacedName.String())
}

// applyStatus sends the writer's status apply; the returned profile holds
// the API server's answer, and is nil when the apply could not be built.
func (w *Writer) applyStatus(ctx context.Context, apply profilewrite.StatusApply, opts ...client.SubResourcePatchOption) (*cpv1alpha1.ClusterProfile, error) {
	body, err := apply.Body()
	if err != nil {
		return nil, err
	}
	p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: apply.Namespace, Name: apply.Name}}
	return p, ssa.ApplyStatus(ctx, w.client, p, json.RawMessage(body), w.identity.FieldManager, opts...)
}

// mergeStatus writes status as the whole of current's, under optimistic lock.
func (w *Writer) mergeStatus(ctx context.Context, current *cpv1alpha1.ClusterProfile, status cpv1alpha1.ClusterProfileStatus) (*cpv1alpha1.ClusterProfile, error) {
	patched := current.DeepCopy()
	patched.Status = status
	err := w.client.Status().Patch(ctx, patched, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(w.identity.FieldManager))
	return w.wrote(patched, metrics.OpStatus, err, fmt.Sprintf("merging status of ClusterProfile %s/%s", current.Namespace, current.Name))
}

// tryApply sends s's apply as a dry run and fails unless the API server
// would keep every entry outside s.DryRunMayDrop: just after the CRD
// switched to list-maps, the server may still merge the lists atomically.
// The caller's retry comes back once it has caught up.
func (w *Writer) tryApply(ctx context.Context, current *cpv1alpha1.ClusterProfile, s profilewrite.StatusWrite) error {
	p, err := w.applyStatus(ctx, s.Apply, client.DryRunAll)
	if err != nil {
		return fmt.Errorf("trying the status apply of ClusterProfile %s: %w", s.Apply.NamespacedName, err)
	}
	if !profilewrite.ApplyKeepsOthers(current.Status, p.Status, *s.DryRunMayDrop) {
		return fmt.Errorf("not applying the status of ClusterProfile %s: the API server still merges its status lists atomically "+
			"(the ClusterProfile CRD has just switched to list-maps), and other writers' entries would be lost; retrying", s.Apply.NamespacedName)
	}
	return nil
}

// wrote counts a write and remembers its response.
func (w *Writer) wrote(p *cpv1alpha1.ClusterProfile, op string, err error, what string) (*cpv1alpha1.ClusterProfile, error) {
	metrics.ProfileWrite(w.identity.FieldManager, op, err)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	kept := p.DeepCopy() // the caller may change p; the kept copy shares
	Compact(kept, w.shared)
	w.recent.Wrote(kept)
	return p, nil
}
