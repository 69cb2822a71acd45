//go:build linux

package e2e

import (
	"runtime"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// agentNamespace and agentDeployment are where OCM's work agent applies the
// bundle's agent on each managed cluster.
const (
	agentNamespace  = "open-cluster-management-agent-addon"
	agentDeployment = "cluster-profile-agent"
)

// TestManagerAndAgentsRunFromTheImage: the kubelets run the chart's manager
// on the hub and the agent that OCM's addon manager deploys on every
// cluster from the bundle's image in the local registry, this machine's
// platform of it: each process is chrooted into the unpacked image and
// runs the image's binary, never bin/'s.
func TestManagerAndAgentsRunFromTheImage(t *testing.T) {
	requireEnv(t)
	g := NewWithT(t)
	platformDigest := bundlePlatformDigest(g)
	runsFromImage := func(cp *ocmlocal.ControlPlane, namespace, deployment, program string) {
		g.Eventually(func(g Gomega) {
			c, err := env.RunsFromImage(cp, namespace, deployment, program)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.Image).To(Equal(env.Registry.BundleReference()))
			g.Expect(c.ImageDigest).To(Equal(platformDigest))
		}, timeout, interval).Should(Succeed(), "%s/%s on %s", namespace, deployment, cp.Name)
	}
	runsFromImage(env.Hub, releaseNamespace, releaseName, "clusterprofile-manager")
	for _, c := range env.Clusters {
		runsFromImage(c.ControlPlane, agentNamespace, agentDeployment, "clusterprofile-agent")
	}
}

// bundlePlatformDigest is the digest of this machine's platform in the
// bundle's image index, as the registry serves it.
func bundlePlatformDigest(g Gomega) string {
	ref, err := name.ParseReference(env.Registry.BundleReference())
	g.Expect(err).NotTo(HaveOccurred())
	idx, err := remote.Index(ref)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			return d.Digest.String()
		}
	}
	g.Expect(m.Manifests).To(ContainElement(HaveField("Platform.Architecture", runtime.GOARCH)))
	return ""
}
