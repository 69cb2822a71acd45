//go:build linux

package e2e

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// TestConsumerPodFollowsTheDocs: a consumer's pod set up as the chart's
// README says (ocmlocal's StartDocsConsumer: an initContainer from the
// bundle's image runs `cp /cp-creds /plugins/cp-creds` into an emptyDir,
// the consumer's container runs that copy as its exec plugin) reaches
// every managed cluster through the profile's cluster-proxy entry, all of
// it run from the image.
func TestConsumerPodFollowsTheDocs(t *testing.T) {
	requireEnv(t)
	ctx, g := context.Background(), NewWithT(t)
	const name = "docs-consumer"
	g.Expect(env.StartDocsConsumer(ctx, consumerNS, name, msaName)).To(Succeed())
	t.Cleanup(func() { g.Expect(env.StopDocsConsumer(context.Background(), consumerNS, name)).To(Succeed()) })

	g.Eventually(func(g Gomega) {
		containers, err := env.PodContainers(env.Hub, consumerNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		for _, c := range containers {
			g.Expect(c.Rootfs).NotTo(BeEmpty(), "%s runs from the image", c.Name)
		}
		report, err := env.DocsConsumerReport(consumerNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(report.Rows).To(HaveLen(len(env.Clusters)))
		for _, row := range report.Rows {
			g.Expect(row.Provider).To(Equal(consumer.ProxyProvider), "cluster %s is reached through cluster-proxy", row.Cluster)
			g.Expect(row.ServerVersion).To(HavePrefix("v1."), "cluster %s answered /version: %+v", row.Cluster, row)
		}
	}, timeout, interval).Should(Succeed())
}
