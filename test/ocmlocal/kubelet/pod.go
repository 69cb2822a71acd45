//go:build linux

package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// Pod is the pod the kubelet runs for a Deployment.
type Pod struct {
	key, hash, dir string
	// deployment is the UID of the Deployment the pod belongs to: one
	// deleted and created again between two syncs is another Deployment,
	// whose pod is a new one (its ServiceAccount and Secrets may be new too).
	deployment types.UID
	sandbox    *sandbox.Sandbox
	volumes    []volumeFiles
	// namespace and labels of the pod, and its named container ports: what
	// a Service selects and targets (package servicenet).
	namespace string
	labels    map[string]string
	ports     map[string]int32
	// argv of each container, as started, and when.
	argv    [][]string
	started time.Time
	// containers: how each container (init containers first) runs.
	containers []containerInfo
}

// containerInfo says what a container of a pod runs: its image from the
// local registry (unpacked), or a local binary.
type containerInfo struct {
	name  string
	init  bool
	image string
	// from is the unpacked image, nil for a local binary.
	from *images.Image
	// program is the local binary that plays the container.
	program string
	// log receives the container's output.
	log string
}

// Argv is the command line of each container of the pod, as started (the
// binary's local path, then the arguments).
func (p *Pod) Argv() [][]string { return p.argv }

// Started is when the pod started.
func (p *Pod) Started() time.Time { return p.started }

// Ports are the pod's named container ports.
func (p *Pod) Ports() map[string]int32 { return p.ports }

// Forward is the pod sandbox's port-forward socket.
func (p *Pod) Forward() string { return p.sandbox.Forward() }

// Runs tells whether the pod is the one the Deployment wants now: the same
// Deployment, at the same template.
func (p *Pod) Runs(d *appsv1.Deployment) bool {
	return p.deployment == d.UID && p.hash == templateHash(d)
}

func (k *Kubelet) stopPod(p *Pod) {
	p.sandbox.Stop(10 * time.Second)
}

func templateHash(d *appsv1.Deployment) string {
	raw, _ := json.Marshal(d.Spec.Template)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

func containerNames(d *appsv1.Deployment) string {
	var names []string
	for _, c := range d.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// startPod prepares the pod's volumes, service account and environment and
// starts its sandbox. It fails (and is retried) while a Secret, ConfigMap
// or service account the pod needs does not exist yet, as a pod would stay
// ContainerCreating.
func (k *Kubelet) startPod(ctx context.Context, d *appsv1.Deployment, key string) (*Pod, error) {
	spec := d.Spec.Template.Spec
	p := &Pod{key: key, hash: templateHash(d), deployment: d.UID, dir: filepath.Join(k.cfg.WorkDir, "pods", k.cp.Name+"-"+d.Namespace+"-"+d.Name),
		namespace: d.Namespace, labels: d.Spec.Template.Labels, ports: namedPorts(spec)}
	_ = os.RemoveAll(p.dir)
	vols, mounts, err := k.podVolumes(ctx, d, key, p)
	if err != nil {
		return nil, err
	}
	initContainers, err := k.containers(ctx, d, spec.InitContainers, vols, p, true)
	if err != nil {
		return nil, err
	}
	containers, err := k.containers(ctx, d, spec.Containers, vols, p, false)
	if err != nil {
		return nil, err
	}
	for _, c := range containers {
		p.argv = append(p.argv, c.Argv)
	}
	k.mu.Lock()
	inbound := slices.Clone(k.expose[key])
	outbound := slices.Concat(k.podRoutes(), k.reach[key])
	k.mu.Unlock()
	p.started = time.Now()
	p.sandbox, err = k.cfg.Sandboxes.Start(sandbox.Spec{
		Name:           k.cp.Name + "-" + d.Namespace + "-" + d.Name,
		InitContainers: initContainers, Containers: containers, Mounts: mounts,
		Hosts:    k.hosts(key, spec),
		Outbound: outbound,
		Inbound:  inbound,
		Forward:  true,
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// podVolumes prepares the pod's volumes and service account token, and
// the sandbox's mounts for the containers played by local binaries
// (containers run from images get their volumes bound in their own roots).
func (k *Kubelet) podVolumes(ctx context.Context, d *appsv1.Deployment, key string, p *Pod) (podVolumes, []podsandbox.Mount, error) {
	spec := d.Spec.Template.Spec
	volumeDirs, err := k.prepareVolumes(ctx, p, spec.Volumes)
	if err != nil {
		return podVolumes{}, nil, err
	}
	var hostPrograms []corev1.Container
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if !k.fromRegistry(c) {
			hostPrograms = append(hostPrograms, c)
		}
	}
	mounts, rewrites, err := podMounts(corev1.PodSpec{Containers: hostPrograms}, volumeDirs)
	if err != nil {
		return podVolumes{}, nil, fmt.Errorf("pod of Deployment %s: %w", key, err)
	}
	vols := podVolumes{dirs: volumeDirs, rewrites: rewrites}
	if ptr.Deref(spec.AutomountServiceAccountToken, true) {
		if vols.serviceAccount, err = k.writeServiceAccount(ctx, d, p.dir); err != nil {
			return podVolumes{}, nil, err
		}
		mounts = append(mounts, podsandbox.Mount{Source: vols.serviceAccount, Target: serviceAccountDir})
	}
	return vols, mounts, nil
}
