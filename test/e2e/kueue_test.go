//go:build linux

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// TestKueueMultiKueueClusterFromProfileStaysActive: real Kueue v0.16.1 on
// the hub, configured as OCM's documentation configures MultiKueue (the
// open-cluster-management credentials provider: cp-creds with
// --managed-serviceaccount=multikueue), connects to cluster1 through the
// profile the bundle publishes in kueue-system: the entry's server (the
// cluster-proxy user server), its CA, and the token cp-creds reads from the
// synced copy. Kueue runs cp-creds from the bundle's image, as a Kueue pod
// that mounts it from there would. Kueue marks the MultiKueueCluster Active
// once its watches of Workloads and Jobs on cluster1 run, and it stays
// Active.
func TestKueueMultiKueueClusterFromProfileStaysActive(t *testing.T) {
	requireEnv(t)
	ctx, g := context.Background(), NewWithT(t)
	g.SetDefaultEventuallyTimeout(timeout)
	g.SetDefaultEventuallyPollingInterval(interval)
	manager, err := env.RunsFromImage(env.Hub, releaseNamespace, releaseName, "clusterprofile-manager")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.KueuePlugin).To(Equal(filepath.Join(manager.Rootfs, "cp-creds")), "Kueue runs the image's cp-creds")
	const cluster = "cluster1"
	managed, err := env.Cluster(cluster).Clientset()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(consumer.AllowMultiKueueWorker(ctx, managed)).To(Succeed())

	mkc := ocmlocal.NewMultiKueueCluster(cluster, cluster)
	g.Expect(hub.Create(ctx, mkc)).To(Succeed())
	t.Cleanup(func() { _ = client.IgnoreNotFound(hub.Delete(context.Background(), mkc)) })

	active := multiKueueClusterActive(ctx, cluster)
	g.Eventually(active).Should(Succeed())
	g.Consistently(active).WithTimeout(15 * time.Second).WithPolling(time.Second).Should(Succeed())
}

// multiKueueClusterActive checks that Kueue holds the MultiKueueCluster of
// cluster Active.
func multiKueueClusterActive(ctx context.Context, cluster string) func(Gomega) {
	return func(g Gomega) {
		c, err := env.MultiKueueClusterActive(ctx, cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c).NotTo(BeNil(), "Kueue wrote no Active condition")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Active: %s: %s", c.Reason, c.Message)
	}
}
