//go:build linux

package kubelet

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// leaderLeases are the leader Leases of OCM's hub controllers, by
// Deployment. These controllers exit on SIGTERM before client-go releases
// their Lease (library-go's controllercmd ends the process first), so the
// restarted pod would wait out the Lease, up to 2m43s, before it leads.
var leaderLeases = map[string]string{
	"open-cluster-management-hub/cluster-manager-registration-controller": "registration-controller-lock",
}

// releaseLeaderLease releases, once the old pod of a Deployment is gone, the
// leader Lease it held, as client-go's graceful release does: no holder, a
// one-second duration.
func (k *Kubelet) releaseLeaderLease(ctx context.Context, key string) {
	name, ok := leaderLeases[key]
	if !ok {
		return
	}
	namespace, _, _ := strings.Cut(key, "/")
	leases := k.client.CoordinationV1().Leases(namespace)
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		return
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = nil, ptr.To[int32](1)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		k.progressf("kubelet %s: releasing Lease %s/%s of the stopped pod: %v", k.cp.Name, namespace, name, err)
	}
}

// reportAvailable writes the status a Deployment controller and kubelet
// would produce for one running, ready replica: the work agent reports it
// back to the hub, and addon health checks read it.
func (k *Kubelet) reportAvailable(ctx context.Context, d *appsv1.Deployment) {
	if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 {
		return
	}
	d = d.DeepCopy()
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			Message: "running as a local process by the ocmlocal kubelet", LastUpdateTime: now, LastTransitionTime: now,
		}},
	}
	_, _ = k.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
}

// reportScaledDown writes the status of a Deployment scaled to zero.
func (k *Kubelet) reportScaledDown(ctx context.Context, d *appsv1.Deployment) {
	if d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == 0 {
		return
	}
	d = d.DeepCopy()
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation}
	_, _ = k.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
}
