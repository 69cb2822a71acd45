//go:build linux

package ocmlocal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
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
		{Command: "/msa", Path: e.bins.path("msa")},
		{Command: "/proxy-server", Path: e.bins.path("proxy-server")},
		{Command: "/proxy-agent", Path: e.bins.path("proxy-agent")},
		{Command: "/agent", ImageContains: "cluster-proxy", Path: e.bins.path("cluster-proxy-addon-agent")},
		{Command: "/cluster-proxy", Path: e.bins.path("cluster-proxy")},
		{Command: "/manager", ImageContains: "cluster-proxy", Path: e.bins.path("cluster-proxy-manager")},
		{Command: "/manager", ImageContains: kueueImageOf(e.bins.kueue), Path: e.bins.path("kueue")},
		{Command: "/manager", ImageContains: kueueImageOf(e.bins.kueueUpgrade), Path: e.bins.path(kueueUpgradeBinary)},
		AgentImage(),
		ManagerImage(),
	}
}

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
	expose map[string][]route
	// reach: host ports a Deployment's pod reaches at the same address, as
	// a Service's (e.g. Kueue's pod, cluster-proxy's user server).
	reach map[string][]route
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
	sandbox    *sandboxed
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
	from *unpackedImage
	// program is the local binary that plays the container.
	program string
	// log receives the container's output.
	log string
}

// volumeFiles is a Secret or ConfigMap written into a directory.
type volumeFiles struct {
	dir, namespace, secret, configMap string
	optional                          bool
}

func (e *Env) startKubelet(cp *ControlPlane) (*kubelet, error) {
	c, err := cp.Clientset()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &kubelet{env: e, cp: cp, client: c, cancel: cancel, done: make(chan struct{}),
		pods: map[string]*pod{}, waits: map[string]string{}, expose: map[string][]route{}, reach: map[string][]route{}, names: map[string][]string{}, held: map[string]bool{}}
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
	k.expose[key] = append(k.expose[key], route{inside: hostPort(containerPort), host: hostPort(host)})
}

// reachPort lets a Deployment's pod reach a host port at the same
// address (127.0.0.1:port), as other pods reach a Service.
func (k *kubelet) reachPort(namespace, deployment string, port int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	k.reach[key] = append(k.reach[key], sameRoute(port))
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
	k.reach[key] = append(k.reach[key], route{inside: hostPort(port), host: hostPort(host)})
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

// refreshVolumes writes a running pod's Secret and ConfigMap volumes again
// (startPod wrote them first). It logs a wait once, and its end, so that a
// Secret deleted and never written again shows in the log as a wait that
// does not end, and the same wait coming back is logged again.
func (k *kubelet) refreshVolumes(ctx context.Context, key string, p *pod) {
	key += "/volumes"
	if err := k.writeVolumes(ctx, p.volumes); err != nil {
		k.waitOnce(ctx, key, err.Error())
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.waits[key]; ok {
		delete(k.waits, key)
		k.env.progressf("kubelet %s: %s written again", k.cp.Name, key)
	}
}

// leaderLeases are the leader Leases of OCM's hub controllers, by
// Deployment. These controllers exit on SIGTERM before client-go releases
// their Lease (library-go's controllercmd ends the process first), so the
// restarted pod would wait out the Lease, up to 2m43s, before it leads.
var leaderLeases = map[string]string{
	"open-cluster-management-hub/cluster-manager-registration-controller": "registration-controller-lock",
}

// releaseLeaderLease releases, once the old pod of a Deployment is gone, the
// leader Lease it held, as client-go's graceful release does: no holder, a
// one-second duration.
func (k *kubelet) releaseLeaderLease(ctx context.Context, key string) {
	name, ok := leaderLeases[key]
	if !ok {
		return
	}
	namespace, _, _ := strings.Cut(key, "/")
	leases := k.client.CoordinationV1().Leases(namespace)
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		return
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = nil, ptr.To[int32](1)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		k.env.progressf("kubelet %s: releasing Lease %s/%s of the stopped pod: %v", k.cp.Name, namespace, name, err)
	}
}

func (k *kubelet) stopPod(p *pod) {
	p.sandbox.proc.stop(10 * time.Second)
	k.env.procs.remove(p.sandbox.proc)
	p.sandbox.close()
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

// reportAvailable writes the status a Deployment controller and kubelet
// would produce for one running, ready replica: the work agent reports it
// back to the hub, and addon health checks read it.
func (k *kubelet) reportAvailable(ctx context.Context, d *appsv1.Deployment) {
	if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 {
		return
	}
	d = d.DeepCopy()
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			Message: "running as a local process by the ocmlocal kubelet", LastUpdateTime: now, LastTransitionTime: now,
		}},
	}
	_, _ = k.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
}

// reportScaledDown writes the status of a Deployment scaled to zero.
func (k *kubelet) reportScaledDown(ctx context.Context, d *appsv1.Deployment) {
	if d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == 0 {
		return
	}
	d = d.DeepCopy()
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation}
	_, _ = k.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
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
	p.sandbox, err = k.env.startSandboxed(sandboxSpec{
		name:           k.cp.Name + "-" + d.Namespace + "-" + d.Name,
		initContainers: initContainers, containers: containers, mounts: mounts,
		hosts:    k.hosts(key, spec),
		outbound: outbound,
		inbound:  inbound,
		forward:  true,
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// prepareVolumes makes a directory per volume of the pod and writes the
// files of its Secret and ConfigMap volumes; it returns the directories by
// volume name.
func (k *kubelet) prepareVolumes(ctx context.Context, p *pod, volumes []corev1.Volume) (map[string]string, error) {
	dirs := map[string]string{}
	for _, v := range volumes {
		dir := filepath.Join(p.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		dirs[v.Name] = dir
		switch {
		case v.EmptyDir != nil:
			// Writable by any user, as a kubelet makes it.
			if err := os.Chmod(dir, 0o777); err != nil {
				return nil, err
			}
		case v.Secret != nil:
			p.volumes = append(p.volumes, volumeFiles{dir: dir, namespace: p.namespace, secret: v.Secret.SecretName, optional: ptr.Deref(v.Secret.Optional, false)})
		case v.ConfigMap != nil:
			p.volumes = append(p.volumes, volumeFiles{dir: dir, namespace: p.namespace, configMap: v.ConfigMap.Name, optional: ptr.Deref(v.ConfigMap.Optional, false)})
		}
		// emptyDir and others: an empty directory.
	}
	return dirs, k.writeVolumes(ctx, p.volumes)
}

// namedPorts are the pod's container ports that have a name (a Service's
// targetPort may name one).
func namedPorts(spec corev1.PodSpec) map[string]int32 {
	ports := map[string]int32{}
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name != "" {
				ports[p.Name] = p.ContainerPort
			}
		}
	}
	return ports
}

// podMounts binds each volume at its mount path in the sandbox: under /etc,
// /var/run and /tmp (see podsandbox.bind), and under a top-level directory
// that the host does not use (missing or empty, e.g. the klusterlet agent's
// /spoke: the sandbox puts a private tmpfs there). The container's
// arguments and environment are also rewritten from a mount path outside
// /etc, /var/run and /tmp to the volume's directory (rewrites: mount path →
// directory), so that a path under a top-level directory the host does use
// (which cannot be bound) still works where the arguments name it; a
// sub-path mount (one file) is only rewritten. A volume
// at /tmp itself (OCM's scratch emptyDir) is neither: the pod keeps the
// host's /tmp, where the work directory lives, and programs make their own
// unique temporary names there.
func podMounts(spec corev1.PodSpec, volumeDirs map[string]string) ([]podsandbox.Mount, map[string]string, error) {
	var mounts []podsandbox.Mount
	rewrites := map[string]string{}
	bound := map[string]string{}
	for _, c := range spec.Containers {
		for _, vm := range c.VolumeMounts {
			dir, ok := volumeDirs[vm.Name]
			if !ok {
				return nil, nil, fmt.Errorf("container %s mounts unknown volume %s", c.Name, vm.Name)
			}
			if vm.SubPath != "" {
				dir = filepath.Join(dir, vm.SubPath)
			}
			target := filepath.Clean(vm.MountPath)
			if prev, seen := bound[target]; seen {
				if prev != dir {
					return nil, nil, fmt.Errorf("two volumes at %s; containers of one pod share the sandbox's mounts", target)
				}
				continue
			}
			bound[target] = dir
			switch {
			case vm.SubPath != "":
				// One key of a Secret or ConfigMap: a file, which the sandbox
				// cannot bind over a directory; the arguments name it (e.g.
				// Kueue's --config=/controller_manager_config.yaml).
				rewrites[target] = dir
			case target == "/tmp":
			case strings.HasPrefix(target, "/etc/") || strings.HasPrefix(target, "/var/run/") || strings.HasPrefix(target, "/run/") || strings.HasPrefix(target, "/tmp/"):
				mounts = append(mounts, podsandbox.Mount{Source: dir, Target: target})
			default:
				rewrites[target] = dir
				if podsandbox.UnusedTop(target) {
					mounts = append(mounts, podsandbox.Mount{Source: dir, Target: target})
				}
			}
		}
	}
	return mounts, rewrites, nil
}

// hosts are the pod's /etc/hosts additions: the in-cluster API server
// names (which the sandbox relays to the cluster's API server), the
// Services it reaches by name, and the pod's hostAliases, as a kubelet
// writes them.
func (k *kubelet) hosts(key string, spec corev1.PodSpec) []string {
	lines := []string{"127.0.0.1 kubernetes kubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local"}
	k.mu.Lock()
	lines = append(lines, k.names[key]...)
	k.mu.Unlock()
	for _, a := range spec.HostAliases {
		lines = append(lines, a.IP+" "+strings.Join(a.Hostnames, " "))
	}
	return lines
}

// podRoutes are the addresses every pod of a cluster reaches: its API
// server in-cluster at 127.0.0.1:443 (KUBERNETES_SERVICE_HOST/PORT below)
// and at its own port (kubeconfigs written by the harness), the hub's API
// server (the addons' hub kubeconfigs name https://127.0.0.1:<hub port>),
// and the endpoints the environment publishes to every pod (cluster-proxy's
// proxy-server entry point).
func (e *Env) podRoutes(cp *ControlPlane) []route {
	routes := []route{{inside: "127.0.0.1:443", host: hostPort(cp.Port)}, sameRoute(cp.Port)}
	if cp != e.Hub {
		routes = append(routes, sameRoute(e.Hub.Port))
	}
	for _, port := range e.publishedPorts {
		routes = append(routes, sameRoute(port))
	}
	return routes
}

// podVolumes are the pod's volume directories (by volume name), the
// rewrites of mount paths in the arguments of local binaries (podMounts),
// and the service account directory ("" without a token).
type podVolumes struct {
	dirs           map[string]string
	rewrites       map[string]string
	serviceAccount string
}

// serviceAccountDir is where a pod's service account token is mounted.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// containers builds each container's command line and environment, and
// records in p how each runs: from its image in the local registry
// (pulled and unpacked, see imagecontainer.go), or as a local binary.
func (k *kubelet) containers(ctx context.Context, d *appsv1.Deployment, cs []corev1.Container, vols podVolumes, p *pod, init bool) ([]podsandbox.Container, error) {
	var out []podsandbox.Container
	for _, c := range cs {
		env, err := k.containerEnv(ctx, d, c)
		if err != nil {
			return nil, err
		}
		info := containerInfo{name: c.Name, init: init, image: c.Image,
			log: filepath.Join(k.env.procs.logDir, k.cp.Name+"-"+d.Namespace+"-"+d.Name+"-"+c.Name+".log")}
		var sc podsandbox.Container
		if k.env.fromRegistry(c) {
			sc, info.from, err = k.env.imageContainer(d.Spec.Template.Spec, c, env, vols)
		} else {
			sc, info.program, err = k.env.hostContainer(c, env, vols.rewrites)
		}
		if err != nil {
			return nil, fmt.Errorf("container %s: %w", c.Name, err)
		}
		sc.Log = info.log
		out = append(out, sc)
		p.containers = append(p.containers, info)
	}
	return out, nil
}

// hostContainer builds a container played by the local binary its image
// maps to, in the sandbox's view of the host's file system, with mount
// paths rewritten (podMounts) in its arguments and environment.
func (e *Env) hostContainer(c corev1.Container, env, rewrites map[string]string) (podsandbox.Container, string, error) {
	bin, _ := e.binaryFor(c)
	if _, err := os.Stat(bin); err != nil {
		return podsandbox.Container{}, "", fmt.Errorf("binary %s is not built: %w", bin, err)
	}
	argv := append(slices.Clone(c.Command), c.Args...)
	argv[0] = bin
	for i := range argv[1:] {
		argv[i+1] = rewritePaths(expandVars(argv[i+1], env), rewrites)
	}
	var envList []string
	for name, value := range env {
		envList = append(envList, name+"="+rewritePaths(value, rewrites))
	}
	slices.Sort(envList)
	return podsandbox.Container{Name: c.Name, Argv: argv, Env: podEnv(envList...)}, bin, nil
}

// containerEnv resolves the container's environment as a kubelet would,
// with the in-cluster API server at 127.0.0.1:443 (relayed by the sandbox
// to this cluster's API server; its certificate is valid for 127.0.0.1).
func (k *kubelet) containerEnv(ctx context.Context, d *appsv1.Deployment, c corev1.Container) (map[string]string, error) {
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	for _, v := range c.Env {
		switch {
		case v.ValueFrom == nil:
			env[v.Name] = expandVars(v.Value, env)
		case v.ValueFrom.FieldRef != nil:
			env[v.Name] = fieldValue(d, v.ValueFrom.FieldRef.FieldPath)
		case v.ValueFrom.ResourceFieldRef != nil:
			env[v.Name] = resourceValue(d, c, v.ValueFrom.ResourceFieldRef)
		case v.ValueFrom.SecretKeyRef != nil:
			s, err := k.client.CoreV1().Secrets(d.Namespace).Get(ctx, v.ValueFrom.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", v.Name, err)
			}
			env[v.Name] = string(s.Data[v.ValueFrom.SecretKeyRef.Key])
		case v.ValueFrom.ConfigMapKeyRef != nil:
			cm, err := k.client.CoreV1().ConfigMaps(d.Namespace).Get(ctx, v.ValueFrom.ConfigMapKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", v.Name, err)
			}
			env[v.Name] = cm.Data[v.ValueFrom.ConfigMapKeyRef.Key]
		}
	}
	return env, nil
}

func fieldValue(d *appsv1.Deployment, path string) string {
	switch path {
	case "metadata.namespace":
		return d.Namespace
	case "metadata.name":
		return d.Name + "-ocmlocal"
	case "spec.serviceAccountName":
		return serviceAccountOf(d)
	case "status.podIP", "status.hostIP":
		return "127.0.0.1"
	case "spec.nodeName":
		return "ocmlocal"
	}
	return ""
}

// resourceValue is a container's request or limit as the downward API gives
// it (divisor 1: bytes, whole cores rounded up); "" when not set.
func resourceValue(d *appsv1.Deployment, c corev1.Container, ref *corev1.ResourceFieldSelector) string {
	if ref.ContainerName != "" {
		for _, other := range d.Spec.Template.Spec.Containers {
			if other.Name == ref.ContainerName {
				c = other
			}
		}
	}
	list := c.Resources.Limits
	name, isRequest := strings.CutPrefix(ref.Resource, "requests.")
	if isRequest {
		list = c.Resources.Requests
	} else {
		name = strings.TrimPrefix(ref.Resource, "limits.")
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return ""
	}
	return strconv.FormatInt(q.Value(), 10)
}

// expandVars replaces $(NAME) with the variable's value, as Kubernetes does
// in args and env values.
func expandVars(s string, env map[string]string) string {
	for name, value := range env {
		s = strings.ReplaceAll(s, "$("+name+")", value)
	}
	return s
}

// rewritePaths replaces a mount path with the volume's directory where the
// path starts a value: the whole string, or after "=" (flags) or ","/":"
// (lists), followed by "/", "," or the end.
func rewritePaths(s string, rewrites map[string]string) string {
	for from, to := range rewrites {
		re := regexp.MustCompile(`(^|[=,:])` + regexp.QuoteMeta(from) + `(/|,|$)`)
		s = re.ReplaceAllString(s, "${1}"+strings.ReplaceAll(to, "$", "$$")+"${2}")
	}
	return s
}

func serviceAccountOf(d *appsv1.Deployment) string {
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != "" {
		return spec.ServiceAccountName
	}
	if spec.DeprecatedServiceAccount != "" {
		return spec.DeprecatedServiceAccount
	}
	return "default"
}

// writeServiceAccount writes what a projected service account volume holds:
// a token of the pod's service account from a real TokenRequest, the
// cluster's CA and the namespace.
func (k *kubelet) writeServiceAccount(ctx context.Context, d *appsv1.Deployment, podDir string) (string, error) {
	sa := serviceAccountOf(d)
	tr, err := k.client.CoreV1().ServiceAccounts(d.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s/%s: %w", d.Namespace, sa, err)
	}
	dir := filepath.Join(podDir, "serviceaccount")
	files := map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": k.cp.CAData, "namespace": []byte(d.Namespace)}
	if err := writeFiles(dir, files); err != nil {
		return "", err
	}
	// The projected volume's default mode (0644): a container's user of
	// any uid reads it.
	for name := range files {
		if err := os.Chmod(filepath.Join(dir, name), 0o644); err != nil {
			return "", err
		}
	}
	return dir, os.Chmod(dir, 0o755)
}

// writeVolumes writes each Secret or ConfigMap into its directory, replacing
// files whose content changed (rename, so readers never see half a file).
func (k *kubelet) writeVolumes(ctx context.Context, volumes []volumeFiles) error {
	for _, v := range volumes {
		data, err := k.volumeData(ctx, v)
		if err != nil {
			return err
		}
		for name, content := range data {
			path := filepath.Join(v.dir, name)
			if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
				continue
			}
			if err := os.WriteFile(path+".tmp", content, 0o644); err != nil {
				return err
			}
			if err := os.Rename(path+".tmp", path); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *kubelet) volumeData(ctx context.Context, v volumeFiles) (map[string][]byte, error) {
	if v.secret != "" {
		s, err := k.client.CoreV1().Secrets(v.namespace).Get(ctx, v.secret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && v.optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", v.namespace, v.secret, err)
		}
		return s.Data, nil
	}
	cm, err := k.client.CoreV1().ConfigMaps(v.namespace).Get(ctx, v.configMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && v.optional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", v.namespace, v.configMap, err)
	}
	data := map[string][]byte{}
	for name, value := range cm.Data {
		data[name] = []byte(value)
	}
	return data, nil
}
