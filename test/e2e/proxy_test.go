//go:build linux

package e2e

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// TestConsumerReachesEveryClusterThroughTheUserServer: a consumer built on
// pkg/access with the seed's configuration lists namespaces on each
// managed cluster through the profile's cluster-proxy entry (the user
// server, ANP's tunnel, the proxy agent); after the user server's
// certificate is rotated the entry carries the new one and the consumer
// still gets through.
func TestConsumerReachesEveryClusterThroughTheUserServer(t *testing.T) {
	ctx, g := begin(t)
	c, err := newConsumer(ctx, consumerNS)
	g.Expect(err).NotTo(HaveOccurred())
	reachesAll := func() {
		for _, cluster := range []string{"cluster1", "cluster2"} {
			g.Eventually(func() ([]string, error) { return c.ListNamespaces(ctx, cluster) }).
				Should(ContainElement("open-cluster-management-agent"), "namespaces of %s", cluster)
		}
	}
	reachesAll()

	cert, err := env.RotateUserServerCertificate(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for _, cluster := range []string{"cluster1", "cluster2"} {
		g.Eventually(func(g Gomega) []byte {
			p, err := c.Profile(ctx, cluster)
			g.Expect(err).NotTo(HaveOccurred())
			return proxyEntry(g, p).Cluster.CertificateAuthorityData
		}).Should(Equal(cert), "the entry of %s trusts the new certificate", cluster)
	}
	reachesAll()
}

func proxyEntry(g Gomega, p *cpv1alpha1.ClusterProfile) *cpv1alpha1.AccessProvider {
	for i := range p.Status.AccessProviders {
		if p.Status.AccessProviders[i].Name == consumer.ProxyProvider {
			return &p.Status.AccessProviders[i]
		}
	}
	g.Expect(p.Status.AccessProviders).To(ContainElement(HaveField("Name", consumer.ProxyProvider)))
	return nil
}

// TestReleaseNamespaceGetsNoProfiles: the chart binds the global set into
// its own namespace for the agent's Placement only; nothing is published
// there, while the consumer namespace has every cluster.
func TestReleaseNamespaceGetsNoProfiles(t *testing.T) {
	requireEnv(t)
	ctx, g := context.Background(), NewWithT(t)
	g.Eventually(func(g Gomega) {
		for _, cluster := range []string{"cluster1", "cluster2"} {
			g.Expect(hub.Get(ctx, key(consumerNS, cluster), &cpv1alpha1.ClusterProfile{})).To(Succeed())
		}
	}, timeout, interval).Should(Succeed())
	profiles := &cpv1alpha1.ClusterProfileList{}
	g.Expect(hub.List(ctx, profiles, client.InNamespace(releaseNamespace))).To(Succeed())
	g.Expect(profiles.Items).To(BeEmpty())
}
