package clusterprofile

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusWrite is one writer's status write: a Server-Side Apply of its share
// on list-map CRDs or, on CRDs with atomic status lists, the whole status with
// its share merged in (Merged), written under optimistic lock.
type StatusWrite struct {
	Apply  StatusApply
	Merged *cpv1alpha1.ClusterProfileStatus
}

// PlanStatusWrite returns the write that brings current (nil for a profile
// about to be created) to want, or nil when it would change nothing. owned is
// what the writer owns: on list-map CRDs as read from managedFields
// (OwnershipOf); on atomic ones, where managedFields cannot tell, the entries
// the writer knows to be its own.
func PlanStatusWrite(current *cpv1alpha1.ClusterProfile, want StatusApply, listMaps bool, owned Ownership) *StatusWrite {
	if current == nil && want.Empty() {
		return nil
	}
	if listMaps {
		if current != nil && StatusUpToDate(current, want, owned) {
			return nil
		}
		return &StatusWrite{Apply: want}
	}
	var currentStatus cpv1alpha1.ClusterProfileStatus
	if current != nil {
		currentStatus = current.Status
	}
	merged := MergeStatus(currentStatus, want, owned)
	if current != nil && equality.Semantic.DeepEqual(merged, current.Status) {
		return nil
	}
	return &StatusWrite{Apply: want, Merged: &merged}
}

// WriteStatus sends a planned status write and returns the stored object.
func (a Applier) WriteStatus(ctx context.Context, current *cpv1alpha1.ClusterProfile, w StatusWrite) (*cpv1alpha1.ClusterProfile, error) {
	if w.Merged == nil {
		return a.ApplyStatus(ctx, w.Apply)
	}
	patched := current.DeepCopy()
	patched.Status = *w.Merged
	patch, err := client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}).Data(patched)
	if err != nil {
		return nil, err
	}
	written, err := a.Profiles.ClusterProfiles(current.Namespace).Patch(ctx, current.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: a.FieldManager}, "status")
	if err != nil {
		return nil, fmt.Errorf("merging status of ClusterProfile %s/%s: %w", current.Namespace, current.Name, err)
	}
	return written, nil
}
