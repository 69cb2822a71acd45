//go:build linux

package ocmlocal

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
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// kubelet plays the kubelet (and the Deployment controller's status) for
// one control plane: every Deployment whose containers all map to local
// binaries runs as one pod sandbox; a changed or re-created Deployment
// restarts it, a deleted one (or one scaled to zero) stops it. Secret and
// ConfigMap volumes are written into the pod's directory and kept in sync.
type kubelet struct {
	env    *Env
	cp     *ControlPlane
	client kubernetes.Interface
	// routes every pod of this cluster gets, besides its API server.
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	pods   map[string]*pod
	waits  map[string]string // key → last reason it could not start, logged once
	expose map[string][]sandbox.Route
	// reach: host ports a Deployment's pod reaches at the same address, as
	// a Service's (e.g. Kueue's pod, cluster-proxy's user server).
	reach map[string][]sandbox.Route
	// names: /etc/hosts lines a Deployment's pod gets for the Services it
	// reaches by name (reachService).
	names map[string][]string
	// held: Deployments whose pod is kept stopped, as on a node that is down.
	held map[string]bool
}

type pod struct {
	key, hash, dir string
	// deployment is the UID of the Deployment the pod belongs to: one
	// deleted and created again between two syncs is another Deployment,
	// whose pod is a new one (its ServiceAccount and Secrets may be new too).
	deployment types.UID
	sandbox    *sandbox.Sandbox
	volumes    []volumeFiles
	// namespace and labels of the pod, and its named container ports: what
	// a Service selects and targets (servicenet.go).
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

func (e *Env) startKubelet(cp *ControlPlane) (*kubelet, error) {
	c, err := cp.Clientset()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &kubelet{env: e, cp: cp, client: c, cancel: cancel, done: make(chan struct{}),
		pods: map[string]*pod{}, waits: map[string]string{}, expose: map[string][]sandbox.Route{}, reach: map[string][]sandbox.Route{}, names: map[string][]string{}, held: map[string]bool{}}
	e.kubeletsMu.Lock()
	e.kubelets = append(e.kubelets, k)
	e.kubeletsMu.Unlock()
	go k.run(ctx)
	return k, nil
}

// kubeletOf returns the kubelet of a control plane.
func (e *Env) kubeletOf(cp *ControlPlane) *kubelet {
	e.kubeletsMu.Lock()
	defer e.kubeletsMu.Unlock()
	for _, k := range e.kubelets {
		if k.cp == cp {
			return k
		}
	}
	return nil
}

// exposePort makes a container port of a Deployment's pod reachable at a
// host port, as a Service would.
func (k *kubelet) exposePort(namespace, deployment string, containerPort, host int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	k.expose[key] = append(k.expose[key], sandbox.Route{Inside: process.HostPort(containerPort), Host: process.HostPort(host)})
}

// reachPort lets a Deployment's pod reach a host port at the same
// address (127.0.0.1:port), as other pods reach a Service.
func (k *kubelet) reachPort(namespace, deployment string, port int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	k.reach[key] = append(k.reach[key], sandbox.SameRoute(port))
}

// reachService lets a Deployment's pod reach a Service by its names
// (<service>.<namespace>[.svc[.cluster.local]]) at its port, served by a
// host port, as cluster DNS and kube-proxy would: e.g. the user server by
// the name cluster-proxy's own ClusterProfile writer publishes.
func (k *kubelet) reachService(namespace, deployment, service, serviceNamespace string, port, host int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	name := service + "." + serviceNamespace
	k.names[key] = append(k.names[key], "127.0.0.1 "+strings.Join([]string{name, name + ".svc", name + ".svc.cluster.local"}, " "))
	k.reach[key] = append(k.reach[key], sandbox.Route{Inside: process.HostPort(port), Host: process.HostPort(host)})
}

func (k *kubelet) stop() {
	k.cancel()
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, p := range k.pods {
		k.stopPod(p)
		delete(k.pods, key)
	}
}

func (k *kubelet) run(ctx context.Context) {
	defer close(k.done)
	for {
		if err := k.sync(ctx); err != nil && ctx.Err() == nil {
			k.env.progressf("kubelet %s: %v", k.cp.Name, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (k *kubelet) sync(ctx context.Context) error {
	list, err := k.client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	wanted := map[string]bool{}
	for i := range list.Items {
		d := &list.Items[i]
		key := d.Namespace + "/" + d.Name
		if !k.mapsAll(d) || d.DeletionTimestamp != nil || k.isHeld(key) {
			continue
		}
		if ptr.Deref(d.Spec.Replicas, 1) == 0 {
			k.reportScaledDown(ctx, d)
			continue
		}
		wanted[key] = true
		k.syncDeployment(ctx, d, key)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, p := range k.pods {
		if !wanted[key] {
			k.env.progressf("kubelet %s: stopping pod of Deployment %s (deleted or scaled to 0)", k.cp.Name, key)
			k.stopPod(p)
			delete(k.pods, key)
		}
	}
	return nil
}

func (k *kubelet) syncDeployment(ctx context.Context, d *appsv1.Deployment, key string) {
	k.mu.Lock()
	p := k.pods[key]
	k.mu.Unlock()
	if p != nil && !p.runs(d) {
		why := "template changed"
		if p.deployment != d.UID {
			why = "Deployment created again"
		}
		k.env.progressf("kubelet %s: restarting pod of Deployment %s (%s)", k.cp.Name, key, why)
		k.mu.Lock()
		k.stopPod(p)
		delete(k.pods, key)
		k.mu.Unlock()
		k.releaseLeaderLease(ctx, key)
		p = nil
	}
	if p == nil {
		started, err := k.startPod(ctx, d, key)
		if err != nil {
			k.waitOnce(ctx, key, err.Error())
			return
		}
		k.mu.Lock()
		k.pods[key] = started
		delete(k.waits, key)
		delete(k.waits, key+"/volumes")
		k.mu.Unlock()
		k.env.progressf("kubelet %s: running Deployment %s (%s)", k.cp.Name, key, containerNames(d))
		p = started
	} else {
		k.refreshVolumes(ctx, key, p)
	}
	if !p.ready() {
		return
	}
	k.reportAvailable(ctx, d)
}

func (k *kubelet) isHeld(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held[key]
}

// hold stops the pod of a Deployment and keeps it stopped until release, as
// when its node goes down: nothing in the API says so, the process is gone.
func (k *kubelet) hold(namespace, deployment string) {
	key := namespace + "/" + deployment
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held[key] = true
	if p := k.pods[key]; p != nil {
		k.stopPod(p)
		delete(k.pods, key)
	}
}

// release lets the kubelet run a held Deployment's pod again (a new pod:
// its emptyDir volumes start empty).
func (k *kubelet) release(namespace, deployment string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, namespace+"/"+deployment)
}

// running returns the running pod of a Deployment, or nil.
func (k *kubelet) running(namespace, deployment string) *pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pods[namespace+"/"+deployment]
}

// waitOnce logs why a pod waits, once per reason; a kubelet being stopped
// (its context done) is not waiting.
func (k *kubelet) waitOnce(ctx context.Context, key, reason string) {
	if ctx.Err() != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.waits[key] != reason {
		k.waits[key] = reason
		k.env.progressf("kubelet %s: %s waits: %s", k.cp.Name, key, reason)
	}
}

func (k *kubelet) stopPod(p *pod) {
	p.sandbox.Stop(10 * time.Second)
}

// runs tells whether the pod is the one the Deployment wants now: the same
// Deployment, at the same template.
func (p *pod) runs(d *appsv1.Deployment) bool {
	return p.deployment == d.UID && p.hash == templateHash(d)
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
func (k *kubelet) startPod(ctx context.Context, d *appsv1.Deployment, key string) (*pod, error) {
	spec := d.Spec.Template.Spec
	p := &pod{key: key, hash: templateHash(d), deployment: d.UID, dir: filepath.Join(k.env.WorkDir, "pods", k.cp.Name+"-"+d.Namespace+"-"+d.Name),
		namespace: d.Namespace, labels: d.Spec.Template.Labels, ports: namedPorts(spec)}
	_ = os.RemoveAll(p.dir)
	volumeDirs, err := k.prepareVolumes(ctx, p, spec.Volumes)
	if err != nil {
		return nil, err
	}
	// Containers run from images get their volumes bound in their own
	// roots; the others share the sandbox's mounts.
	var hostPrograms []corev1.Container
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if !k.env.fromRegistry(c) {
			hostPrograms = append(hostPrograms, c)
		}
	}
	mounts, rewrites, err := podMounts(corev1.PodSpec{Containers: hostPrograms}, volumeDirs)
	if err != nil {
		return nil, fmt.Errorf("pod of Deployment %s: %w", key, err)
	}
	vols := podVolumes{dirs: volumeDirs, rewrites: rewrites}
	if ptr.Deref(spec.AutomountServiceAccountToken, true) {
		if vols.serviceAccount, err = k.writeServiceAccount(ctx, d, p.dir); err != nil {
			return nil, err
		}
		mounts = append(mounts, podsandbox.Mount{Source: vols.serviceAccount, Target: serviceAccountDir})
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
	outbound := slices.Concat(k.env.podRoutes(k.cp), k.reach[key])
	k.mu.Unlock()
	p.started = time.Now()
	p.sandbox, err = k.env.sandboxes.Start(sandbox.Spec{
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
