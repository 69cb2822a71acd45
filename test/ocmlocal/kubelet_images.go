//go:build linux

package ocmlocal

import (
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
)

// ImageBinary maps a container to a local binary that plays it.
type ImageBinary struct {
	// Command is the container's entry point: command[0], or args[0] when
	// the container has no command (e.g. "/msa", "/clusterprofile-agent").
	Command string
	// ImageContains, if set, must be part of the container's image.
	ImageContains string
	// Path is the local binary.
	Path string
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
func (e *Env) AddImage(img ImageBinary) {
	e.imagesMu.Lock()
	defer e.imagesMu.Unlock()
	e.images = append(e.images, img)
}

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
		{Command: "/manager", ImageContains: kueueImageOf(e.bins.Kueue), Path: e.bins.Path("kueue")},
		{Command: "/manager", ImageContains: kueueImageOf(e.bins.KueueUpgrade), Path: e.bins.Path(binaries.KueueUpgrade)},
		AgentImage(),
		ManagerImage(),
	}
}

// mapsAll tells whether every container of the Deployment, init
// containers too, runs from an image of the local registry or has a binary.
func (k *kubelet) mapsAll(d *appsv1.Deployment) bool {
	spec := d.Spec.Template.Spec
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if k.env.fromRegistry(c) {
			continue
		}
		if _, ok := k.env.binaryFor(c); !ok {
			return false
		}
	}
	return len(spec.Containers) > 0
}

// fromRegistry tells whether the container's image is in the local
// registry: the kubelet pulls and runs it (see imagecontainer.go).
func (e *Env) fromRegistry(c corev1.Container) bool { return e.Registry.Holds(c.Image) }

func (e *Env) binaryFor(c corev1.Container) (string, bool) {
	e.imagesMu.Lock()
	defer e.imagesMu.Unlock()
	entry := entryPoint(c)
	for _, img := range e.images {
		if img.Command == entry && strings.Contains(c.Image, img.ImageContains) {
			return img.Path, true
		}
	}
	return "", false
}

func entryPoint(c corev1.Container) string {
	if len(c.Command) > 0 {
		return c.Command[0]
	}
	if len(c.Args) > 0 {
		return c.Args[0]
	}
	return ""
}
