//go:build linux

// Package kubelet plays the kubelet (and the Deployment controller's
// status) for one control plane of the harness: every Deployment whose
// containers all run from the local registry's images or map to local
// binaries (ImageMap) runs as one pod sandbox (package sandbox); a changed
// or re-created Deployment restarts it, a deleted one (or one scaled to
// zero) stops it. Secret and ConfigMap volumes are written into the pod's
// directory and kept in sync, the service account token is a real one, and
// a container from an image runs from its unpacked root (package images).
// The kubelet also says which pod a Service selects (SelectPod), for the
// service network, and which ports a pod reaches or exposes.
package kubelet

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// Config is what a kubelet runs its pods with.
type Config struct {
	// WorkDir holds the pods' directories (WorkDir/pods).
	WorkDir string
	// LogDir receives one log per container.
	LogDir string
	// Sandboxes starts the pods' sandboxes.
	Sandboxes *sandbox.Runner
	// Images maps containers to the local binaries that play them.
	Images *ImageMap
	// Registry is the local registry, nil without one: a container of an
	// image there runs from the image, pulled into Store.
	Registry *registry.Registry
	Store    *images.Store
	// Routes are addresses every pod reaches besides its own API server:
	// the hub's API server and the ports the environment publishes.
	Routes []sandbox.Route
	// Progress receives one line per pod started, restarted or stopped,
	// and per reason a pod waits.
	Progress func(format string, args ...any)
}

// Kubelet plays the kubelet for one control plane.
type Kubelet struct {
	cfg    Config
	cp     *controlplane.ControlPlane
	client kubernetes.Interface
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	pods   map[string]*Pod
	waits  map[string]string // key → last reason it could not start, logged once
	expose map[string][]sandbox.Route
	// reach: host ports a Deployment's pod reaches at the same address, as
	// a Service's (e.g. Kueue's pod, cluster-proxy's user server).
	reach map[string][]sandbox.Route
	// names: /etc/hosts lines a Deployment's pod gets for the Services it
	// reaches by name (ReachService).
	names map[string][]string
	// held: Deployments whose pod is kept stopped, as on a node that is down.
	held map[string]bool
}

// New is the kubelet of a control plane, not started yet (Start).
func New(cp *controlplane.ControlPlane, cfg Config) (*Kubelet, error) {
	c, err := cp.Clientset()
	if err != nil {
		return nil, err
	}
	return &Kubelet{cfg: cfg, cp: cp, client: c, done: make(chan struct{}),
		pods: map[string]*Pod{}, waits: map[string]string{}, expose: map[string][]sandbox.Route{}, reach: map[string][]sandbox.Route{}, names: map[string][]string{}, held: map[string]bool{}}, nil
}

// Start syncs the Deployments every second until Stop.
func (k *Kubelet) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	go k.run(ctx)
}

// ControlPlane is the control plane whose Deployments the kubelet runs.
func (k *Kubelet) ControlPlane() *controlplane.ControlPlane { return k.cp }

// Stop ends the sync and every pod.
func (k *Kubelet) Stop() {
	k.cancel()
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, p := range k.pods {
		k.stopPod(p)
		delete(k.pods, key)
	}
}

func (k *Kubelet) progressf(format string, args ...any) { k.cfg.Progress(format, args...) }

func (k *Kubelet) run(ctx context.Context) {
	defer close(k.done)
	for {
		if err := k.sync(ctx); err != nil && ctx.Err() == nil {
			k.progressf("kubelet %s: %v", k.cp.Name, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (k *Kubelet) sync(ctx context.Context) error {
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
			k.progressf("kubelet %s: stopping pod of Deployment %s (deleted or scaled to 0)", k.cp.Name, key)
			k.stopPod(p)
			delete(k.pods, key)
		}
	}
	return nil
}

func (k *Kubelet) syncDeployment(ctx context.Context, d *appsv1.Deployment, key string) {
	k.mu.Lock()
	p := k.pods[key]
	k.mu.Unlock()
	if p != nil && !p.Runs(d) {
		why := "template changed"
		if p.deployment != d.UID {
			why = "Deployment created again"
		}
		k.progressf("kubelet %s: restarting pod of Deployment %s (%s)", k.cp.Name, key, why)
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
		k.progressf("kubelet %s: running Deployment %s (%s)", k.cp.Name, key, containerNames(d))
		p = started
	} else {
		k.refreshVolumes(ctx, key, p)
	}
	if !p.ready() {
		return
	}
	k.reportAvailable(ctx, d)
}

// IsHeld tells whether the pod of a Deployment is kept stopped (Hold).
func (k *Kubelet) IsHeld(namespace, deployment string) bool {
	return k.isHeld(namespace + "/" + deployment)
}

func (k *Kubelet) isHeld(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held[key]
}

// Hold stops the pod of a Deployment and keeps it stopped until Release, as
// when its node goes down: nothing in the API says so, the process is gone.
func (k *Kubelet) Hold(namespace, deployment string) {
	key := namespace + "/" + deployment
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held[key] = true
	if p := k.pods[key]; p != nil {
		k.stopPod(p)
		delete(k.pods, key)
	}
}

// Release lets the kubelet run a held Deployment's pod again (a new pod:
// its emptyDir volumes start empty).
func (k *Kubelet) Release(namespace, deployment string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, namespace+"/"+deployment)
}

// Running returns the running pod of a Deployment, or nil.
func (k *Kubelet) Running(namespace, deployment string) *Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pods[namespace+"/"+deployment]
}

// waitOnce logs why a pod waits, once per reason; a kubelet being stopped
// (its context done) is not waiting.
func (k *Kubelet) waitOnce(ctx context.Context, key, reason string) {
	if ctx.Err() != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.waits[key] != reason {
		k.waits[key] = reason
		k.progressf("kubelet %s: %s waits: %s", k.cp.Name, key, reason)
	}
}
