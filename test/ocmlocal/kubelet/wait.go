//go:build linux

package kubelet

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// WaitDeploymentAvailable waits until a Deployment on a control plane has
// an available replica, i.e. its kubelet runs the pod.
func WaitDeploymentAvailable(ctx context.Context, cp *controlplane.ControlPlane, namespace, name string) error {
	c, err := cp.Clientset()
	if err != nil {
		return err
	}
	err = process.Poll(ctx, 2*time.Minute, nil, func(ctx context.Context) (bool, error) {
		d, err := c.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// The kubelet observes a new generation once it runs its pod.
		return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas > 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Deployment %s/%s on %s: %w", namespace, name, cp.Name, err)
	}
	return nil
}
