//go:build linux

package kubelet

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
)

// readyAfter is how long a container from an image must have run before
// its pod counts as ready: one that cannot start (a wrong path, a
// dynamically linked binary) or exits at once (a file it may not read)
// keeps its Deployment unavailable, as its failing probes would.
const readyAfter = 2 * time.Second

// ContainerStatus is one container of a running pod, as the kubelet runs it.
type ContainerStatus struct {
	// Status is what the pod sandbox reports: the process (PID), its root,
	// restarts, how the last one ended, whether an init container completed.
	podsandbox.Status
	// Image is the container's image. ImageDigest and Rootfs are the
	// platform manifest it runs from and that image unpacked, for a
	// container from the local registry; Program is the local binary that
	// plays any other.
	Image, ImageDigest, Rootfs, Program string
	// Log is the file that receives the container's output.
	Log string
}

// PodContainers returns the containers, init containers first, of the
// running pod of a Deployment.
func (k *Kubelet) PodContainers(namespace, deployment string) ([]ContainerStatus, error) {
	p := k.Running(namespace, deployment)
	if p == nil {
		return nil, fmt.Errorf("no pod of Deployment %s/%s runs on %s", namespace, deployment, k.cp.Name)
	}
	return p.statuses(), nil
}

func (p *Pod) statuses() []ContainerStatus {
	out := make([]ContainerStatus, 0, len(p.containers))
	for _, c := range p.containers {
		st := ContainerStatus{Status: podsandbox.Status{Name: c.name, Init: c.init}, Image: c.image, Program: c.program, Log: c.log}
		if c.from != nil {
			st.ImageDigest, st.Rootfs = c.from.Digest.String(), c.from.Rootfs
		}
		if raw, err := os.ReadFile(podsandbox.StatusPath(p.dir, c.name)); err == nil {
			_ = json.Unmarshal(raw, &st.Status)
		}
		out = append(out, st)
	}
	return out
}

// ready tells whether the pod's containers from images run: every init
// container completed, every other container's process up for readyAfter.
// Containers played by local binaries count as ready once started.
func (p *Pod) ready() bool {
	for _, st := range p.statuses() {
		if st.Rootfs == "" {
			continue
		}
		if st.Init && !st.Completed {
			return false
		}
		if !st.Init && (st.PID == 0 || time.Since(st.Started) < readyAfter) {
			return false
		}
	}
	return true
}

// RunsFromImage checks that the running pod of a Deployment runs program
// from its image in the local registry, as a node would: its one container's
// process is chrooted into the unpacked image and executes the image's
// /program, not bin/'s. It returns that container.
func (k *Kubelet) RunsFromImage(namespace, deployment, program string) (ContainerStatus, error) {
	cp := k.cp
	containers, err := k.PodContainers(namespace, deployment)
	if err != nil {
		return ContainerStatus{}, err
	}
	if len(containers) != 1 {
		return ContainerStatus{}, fmt.Errorf("%s/%s on %s: %d containers, want 1", namespace, deployment, cp.Name, len(containers))
	}
	c := containers[0]
	if !k.cfg.Registry.Holds(c.Image) || c.Rootfs == "" || c.PID == 0 {
		return c, fmt.Errorf("%s/%s on %s runs %q (pid %d), not an image from the local registry", namespace, deployment, cp.Name, c.Image, c.PID)
	}
	root, err := os.Readlink(fmt.Sprintf("/proc/%d/root", c.PID))
	if err != nil {
		return c, err
	}
	if root != c.Root {
		return c, fmt.Errorf("%s/%s on %s: the process's root is %s, not the container's %s", namespace, deployment, cp.Name, root, c.Root)
	}
	exe, err := fileDigest(fmt.Sprintf("/proc/%d/exe", c.PID))
	if err != nil {
		return c, err
	}
	inImage, err := fileDigest(filepath.Join(c.Rootfs, program))
	if err != nil {
		return c, err
	}
	local, err := fileDigest(filepath.Join(binaries.RepoRoot(), "bin", program))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	if exe != inImage || exe == local {
		return c, fmt.Errorf("%s/%s on %s does not run the image's /%s", namespace, deployment, cp.Name, program)
	}
	return c, nil
}

// fileDigest is a file's SHA-256.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
