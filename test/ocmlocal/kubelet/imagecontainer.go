//go:build linux

package kubelet

import (
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
)

// imageContainer builds a container that runs from its image in the local
// registry, as a kubelet and a container runtime would: the image pulled
// (with the container's pull policy) and unpacked, the command line from
// the container's command and args over the image's entrypoint and cmd,
// the image's environment under the container's, the user from the pod's
// or container's securityContext over the image's, and the container's
// volume mounts and the service account token bound in its root.
func (k *Kubelet) imageContainer(spec corev1.PodSpec, c corev1.Container, env map[string]string, vols podVolumes) (podsandbox.Container, *images.Image, error) {
	img, err := k.cfg.Store.Get(c.Image, c.ImagePullPolicy)
	if err != nil {
		return podsandbox.Container{}, nil, err
	}
	argv, err := images.CommandLine(c, img.Config, env)
	if err != nil {
		return podsandbox.Container{}, nil, err
	}
	root, err := images.User(spec, c, img)
	if err != nil {
		return podsandbox.Container{}, nil, err
	}
	root.Rootfs = img.Rootfs
	root.WorkingDir = c.WorkingDir
	if root.WorkingDir == "" {
		root.WorkingDir = img.Config.WorkingDir
	}
	if c.SecurityContext != nil {
		root.ReadOnly = ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false)
	}
	for _, vm := range c.VolumeMounts {
		dir, ok := vols.dirs[vm.Name]
		if !ok {
			return podsandbox.Container{}, nil, fmt.Errorf("mounts unknown volume %s", vm.Name)
		}
		if vm.SubPath != "" {
			dir = filepath.Join(dir, vm.SubPath)
		}
		root.Mounts = append(root.Mounts, podsandbox.Mount{Source: dir, Target: vm.MountPath, ReadOnly: vm.ReadOnly})
	}
	if vols.serviceAccount != "" {
		root.Mounts = append(root.Mounts, podsandbox.Mount{Source: vols.serviceAccount, Target: serviceAccountDir, ReadOnly: true})
	}
	return podsandbox.Container{Name: c.Name, Argv: argv, Env: images.Env(img, root.UID, env), Root: &root}, img, nil
}
