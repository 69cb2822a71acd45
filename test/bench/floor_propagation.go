package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
)

// propagationFloor times what a condition change costs the API server
// alone, as the floor of the propagation phase: for each sampled cluster
// (the ones the propagation phase flips), the floor's mirror writer applies
// a new ControlPlaneHealthy reason to the cluster's profile in every floor
// namespace at once, as the mirror does, and the time runs until the last
// apply returns. The propagation phase adds to it the cluster's status
// update, the manager's watch and reconcile, and the watch event that
// shows each profile to the bench.
func (b *bench) propagationFloor(ctx context.Context, f *floorWriter) (*latencies, error) {
	samples := b.cfg.propagationSamples
	if samples == 0 {
		return nil, nil
	}
	took := make([]time.Duration, 0, samples)
	for i := range samples {
		cluster := b.world.propagationSample(i, samples)
		start := time.Now()
		err := forEach(ctx, len(f.namespaces), len(f.namespaces), func(ctx context.Context, j int) error {
			return f.changeHealthyReason(ctx, f.namespaces[j], cluster, fmt.Sprintf("BenchFloor%d", i))
		})
		if err != nil {
			return nil, fmt.Errorf("propagation floor, sample %d (cluster %s): %w", i, cluster, err)
		}
		took = append(took, time.Since(start))
	}
	l := summarize(took)
	return &l, nil
}

// changeHealthyReason applies the mirror's status of cluster's profile in
// namespace with reason as its ControlPlaneHealthy reason.
func (f *floorWriter) changeHealthyReason(ctx context.Context, namespace, cluster, reason string) error {
	_, status := f.world.profileWrites(namespace, cluster)
	conditions, err := unhealthy(status.Conditions, reason)
	if err != nil {
		return fmt.Errorf("the mirror's status of %s: %w", cluster, err)
	}
	status.Conditions = conditions
	current := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster}}
	_, err = f.writers[0].Execute(ctx, &profilewrite.Write{Current: current, Status: &profilewrite.StatusWrite{Apply: status}})
	return err
}

// unhealthy is a copy of conditions whose ControlPlaneHealthy is False for
// reason; the world's conditions are shared and stay as they are.
func unhealthy(conditions []metav1.Condition, reason string) ([]metav1.Condition, error) {
	out := slices.Clone(conditions)
	healthy := meta.FindStatusCondition(out, cpv1alpha1.ClusterConditionControlPlaneHealthy)
	if healthy == nil {
		return nil, fmt.Errorf("no %s condition", cpv1alpha1.ClusterConditionControlPlaneHealthy)
	}
	healthy.Status, healthy.Reason = metav1.ConditionFalse, reason
	return out, nil
}
