//go:build linux

package ocmlocal

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

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
// running pod of a Deployment on a control plane (the hub or a managed
// cluster's).
func (e *Env) PodContainers(cp *ControlPlane, namespace, deployment string) ([]ContainerStatus, error) {
	k := e.kubeletOf(cp)
	if k == nil {
		return nil, fmt.Errorf("no kubelet for %s", cp.Name)
	}
	p := k.running(namespace, deployment)
	if p == nil {
		return nil, fmt.Errorf("no pod of Deployment %s/%s runs on %s", namespace, deployment, cp.Name)
	}
	return p.statuses(), nil
}

func (p *pod) statuses() []ContainerStatus {
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
func (p *pod) ready() bool {
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
