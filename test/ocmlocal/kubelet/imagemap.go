//go:build linux

package kubelet

import (
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

// ImageMap maps containers to the local binaries that play them; it
// may grow while the kubelets run (Add).
type ImageMap struct {
	mu     sync.Mutex
	images []ImageBinary
}

// NewImageMap is a map of these images, the first that matches a
// container winning.
func NewImageMap(images ...ImageBinary) *ImageMap { return &ImageMap{images: images} }

// Add maps one more container to a local binary, for Deployments created
// from now on (a running pod keeps its binary).
func (m *ImageMap) Add(img ImageBinary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.images = append(m.images, img)
}

// Binary is the local binary that plays the container, if one does.
func (m *ImageMap) Binary(c corev1.Container) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	entry := entryPoint(c)
	for _, img := range m.images {
		if img.Command == entry && strings.Contains(c.Image, img.ImageContains) {
			return img.Path, true
		}
	}
	return "", false
}

// mapsAll tells whether every container of the Deployment, init
// containers too, runs from an image of the local registry or has a binary.
func (k *Kubelet) mapsAll(d *appsv1.Deployment) bool {
	spec := d.Spec.Template.Spec
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if k.fromRegistry(c) {
			continue
		}
		if _, ok := k.cfg.Images.Binary(c); !ok {
			return false
		}
	}
	return len(spec.Containers) > 0
}

// fromRegistry tells whether the container's image is in the local
// registry: the kubelet pulls and runs it (see imagecontainer.go and package images).
func (k *Kubelet) fromRegistry(c corev1.Container) bool { return k.cfg.Registry.Holds(c.Image) }

func entryPoint(c corev1.Container) string {
	if len(c.Command) > 0 {
		return c.Command[0]
	}
	if len(c.Args) > 0 {
		return c.Args[0]
	}
	return ""
}
