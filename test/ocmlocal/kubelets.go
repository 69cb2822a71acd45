//go:build linux

package ocmlocal

import (
	"fmt"
	"path/filepath"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kueue"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// ImageBinary maps a container to a local binary that plays it (see
// Options.Images).
type ImageBinary = kubelet.ImageBinary

// ContainerStatus is one container of a running pod, as the kubelet runs
// it.
type ContainerStatus = kubelet.ContainerStatus

// startKubelet starts the kubelet of a control plane.
func (e *Env) startKubelet(cp *ControlPlane) (*kubelet.Kubelet, error) {
	k, err := kubelet.New(cp, kubelet.Config{WorkDir: e.WorkDir, LogDir: e.procs.LogDir, Sandboxes: e.sandboxes,
		Images: e.images, Registry: e.Registry, Store: e.pulled, Routes: e.podRoutes(cp), Progress: e.progressf})
	if err != nil {
		return nil, err
	}
	e.kubeletsMu.Lock()
	e.kubelets = append(e.kubelets, k)
	e.kubeletsMu.Unlock()
	k.Start()
	return k, nil
}

// kubeletOf returns the kubelet of a control plane.
func (e *Env) kubeletOf(cp *ControlPlane) *kubelet.Kubelet {
	e.kubeletsMu.Lock()
	defer e.kubeletsMu.Unlock()
	for _, k := range e.kubelets {
		if k.ControlPlane() == cp {
			return k
		}
	}
	return nil
}

// podRoutes are the addresses every pod of a cluster reaches besides its
// own API server: the hub's API server (the addons' hub kubeconfigs name
// https://127.0.0.1:<hub port>), and the endpoints the environment
// publishes to every pod (cluster-proxy's proxy-server entry point). Both
// are set before the first kubelet starts.
func (e *Env) podRoutes(cp *ControlPlane) []sandbox.Route {
	var routes []sandbox.Route
	if cp != e.Hub {
		routes = append(routes, sandbox.SameRoute(e.Hub.Port))
	}
	for _, port := range e.publishedPorts {
		routes = append(routes, sandbox.SameRoute(port))
	}
	return routes
}

// AgentImage maps this bundle's cluster-profile-agent (deployed by the
// bundle's addon manager through addon-framework) to bin/clusterprofile-agent,
// built by `make build`.
func AgentImage() ImageBinary {
	return ImageBinary{
		Command: "/clusterprofile-agent", ImageContains: "clusterprofile-bundle",
		Path: filepath.Join(RepoRoot(), "bin", "clusterprofile-agent"),
	}
}

// ManagerImage maps this bundle's clusterprofile-manager (the Helm chart's
// Deployment, if a test installs the chart on the hub) to
// bin/clusterprofile-manager, built by `make build`.
func ManagerImage() ImageBinary {
	return ImageBinary{
		Command: "/clusterprofile-manager", ImageContains: "clusterprofile-bundle",
		Path: filepath.Join(RepoRoot(), "bin", "clusterprofile-manager"),
	}
}

// AddImage maps one more container to a local binary, for Deployments
// created from now on (a running pod keeps its binary).
func (e *Env) AddImage(img ImageBinary) { e.images.Add(img) }

// defaultImages are the entry points of the upstream addon images
// (managed-serviceaccount's /msa; cluster-proxy's image, which holds ANP's
// /proxy-server and /proxy-agent, its /agent and /cluster-proxy) and of
// Kueue's manager.
func (e *Env) defaultImages() []ImageBinary {
	return []ImageBinary{
		{Command: "/msa", Path: e.bins.Path("msa")},
		{Command: "/proxy-server", Path: e.bins.Path("proxy-server")},
		{Command: "/proxy-agent", Path: e.bins.Path("proxy-agent")},
		{Command: "/agent", ImageContains: "cluster-proxy", Path: e.bins.Path("cluster-proxy-addon-agent")},
		{Command: "/cluster-proxy", Path: e.bins.Path("cluster-proxy")},
		{Command: "/manager", ImageContains: "cluster-proxy", Path: e.bins.Path("cluster-proxy-manager")},
		{Command: "/manager", ImageContains: kueue.ImageOf(e.bins.Kueue), Path: e.bins.Path("kueue")},
		{Command: "/manager", ImageContains: kueue.ImageOf(e.bins.KueueUpgrade), Path: e.bins.Path(binaries.KueueUpgrade)},
		AgentImage(),
		ManagerImage(),
	}
}

// kubeletFor returns the kubelet of a control plane, or why there is none.
func (e *Env) kubeletFor(cp *ControlPlane) (*kubelet.Kubelet, error) {
	k := e.kubeletOf(cp)
	if k == nil {
		return nil, fmt.Errorf("no kubelet for %s", cp.Name)
	}
	return k, nil
}

// PodContainers returns the containers, init containers first, of the
// running pod of a Deployment on a control plane (the hub or a managed
// cluster's).
func (e *Env) PodContainers(cp *ControlPlane, namespace, deployment string) ([]ContainerStatus, error) {
	k, err := e.kubeletFor(cp)
	if err != nil {
		return nil, err
	}
	return k.PodContainers(namespace, deployment)
}

// RunsFromImage checks that the running pod of a Deployment runs program
// from its image in the local registry, as a node would: its one container's
// process is chrooted into the unpacked image and executes the image's
// /program, not bin/'s. It returns that container.
func (e *Env) RunsFromImage(cp *ControlPlane, namespace, deployment, program string) (ContainerStatus, error) {
	k, err := e.kubeletFor(cp)
	if err != nil {
		return ContainerStatus{}, err
	}
	return k.RunsFromImage(namespace, deployment, program)
}

// HubPodArgs returns the command line of each container of the pod the hub
// kubelet runs for a Deployment (the binary's local path, then the
// arguments), and whether it runs one. E.g. the registration controller's:
// HubPodArgs("open-cluster-management-hub", "cluster-manager-registration-controller").
func (e *Env) HubPodArgs(namespace, deployment string) ([][]string, bool) {
	p := e.kubeletOf(e.Hub).Running(namespace, deployment)
	if p == nil {
		return nil, false
	}
	return p.Argv(), true
}

// HubPodStarted is when the hub kubelet started the running pod of a
// Deployment (zero if none runs): a pod restarted by a rollout starts later.
func (e *Env) HubPodStarted(namespace, deployment string) time.Time {
	p := e.kubeletOf(e.Hub).Running(namespace, deployment)
	if p == nil {
		return time.Time{}
	}
	return p.Started()
}
