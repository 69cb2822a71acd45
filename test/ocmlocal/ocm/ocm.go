//go:build linux

// Package ocm sets Open Cluster Management up on the harness's control
// planes as clusteradm does, with OCM's own operators at the release
// hack/ocmlocal.sh built: on the hub the cluster-manager operator and a
// ClusterManager (`clusteradm init`), the CRDs OCM does not own and the
// bootstrap service account; on each managed cluster the klusterlet
// operator, the bootstrap kubeconfig and a Klusterlet (`clusteradm join
// --singleton`), registered through a real CSR that it approves and
// accepts (`clusteradm accept`). The kubelets run the Deployments the
// operators create, from OCM's images mapped to the local binaries
// (Images).
package ocm

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
)

// ocmImageRepository is where OCM publishes its images; the kubelet maps
// them, at the built release only, to the local binaries.
const ocmImageRepository = "quay.io/open-cluster-management/"

// Hub is OCM's hub as the harness runs it.
type Hub struct {
	// ControlPlane is the hub's control plane, and Kubelet its kubelet.
	ControlPlane *controlplane.ControlPlane
	Kubelet      *kubelet.Kubelet
	// Modules locates OCM's module (the operators' manifests) and the
	// addons' (their CRDs).
	Modules *binaries.Modules
	// Version is the OCM release the binaries were built from, which the
	// images in the ClusterManager and Klusterlets carry.
	Version string
	// Progress receives one line per step.
	Progress func(format string, args ...any)
}

// ocmImage is the image of one of OCM's programs at the built release.
func (h *Hub) ocmImage(name string) string {
	return ocmImageRepository + name + ":" + h.Version
}

// Images map OCM's images, at the built release, to the binaries built
// from it: the operators and the klusterlet agent (registration-operator),
// and the hub Deployments a ClusterManager creates.
func Images(bins binaries.Set) []kubelet.ImageBinary {
	h := &Hub{Version: bins.OCM.Version}
	var images []kubelet.ImageBinary
	for _, m := range []struct{ command, image, binary string }{
		{"/registration-operator", "registration-operator", "registration-operator"},
		{"/registration", "registration", "registration"},
		{"/work", "work", "work"},
		{"/placement", "placement", "placement"},
		{"/addon", "addon-manager", "addon"},
	} {
		images = append(images, kubelet.ImageBinary{Command: m.command, ImageContains: h.ocmImage(m.image), Path: bins.Path(m.binary)})
	}
	return images
}

// operatorClient is an admin client of a control plane (this bundle's
// scheme knows OCM's operator API).
func operatorClient(cp *controlplane.ControlPlane) (client.Client, error) {
	return client.New(cp.Config, client.Options{Scheme: scheme.New()})
}
