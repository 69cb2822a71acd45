//go:build linux

package kubelet

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
)

// ExposePort makes a container port of a Deployment's pod reachable at a
// host port, as a Service would.
func (k *Kubelet) ExposePort(namespace, deployment string, containerPort, host int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	k.expose[key] = append(k.expose[key], sandbox.Route{Inside: process.HostPort(containerPort), Host: process.HostPort(host)})
}

// ReachPort lets a Deployment's pod reach a host port at the same
// address (127.0.0.1:port), as other pods reach a Service.
func (k *Kubelet) ReachPort(namespace, deployment string, port int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	k.reach[key] = append(k.reach[key], sandbox.SameRoute(port))
}

// ReachService lets a Deployment's pod reach a Service by its names
// (<service>.<namespace>[.svc[.cluster.local]]) at its port, served by a
// host port, as cluster DNS and kube-proxy would: e.g. the user server by
// the name cluster-proxy's own ClusterProfile writer publishes.
func (k *Kubelet) ReachService(namespace, deployment, service, serviceNamespace string, port, host int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + deployment
	name := service + "." + serviceNamespace
	k.names[key] = append(k.names[key], "127.0.0.1 "+strings.Join([]string{name, name + ".svc", name + ".svc.cluster.local"}, " "))
	k.reach[key] = append(k.reach[key], sandbox.Route{Inside: process.HostPort(port), Host: process.HostPort(host)})
}

// SelectPod returns a running pod in namespace whose labels the selector
// matches (an empty selector selects none, as for a Service).
func (k *Kubelet) SelectPod(namespace string, selector map[string]string) *Pod {
	if len(selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(selector)
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pods {
		if p.namespace == namespace && sel.Matches(labels.Set(p.labels)) && p.sandbox.Forward() != "" {
			return p
		}
	}
	return nil
}

// hosts are the pod's /etc/hosts additions: the in-cluster API server
// names (which the sandbox relays to the cluster's API server), the
// Services it reaches by name, and the pod's hostAliases, as a kubelet
// writes them.
func (k *Kubelet) hosts(key string, spec corev1.PodSpec) []string {
	lines := []string{"127.0.0.1 kubernetes kubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local"}
	k.mu.Lock()
	lines = append(lines, k.names[key]...)
	k.mu.Unlock()
	for _, a := range spec.HostAliases {
		lines = append(lines, a.IP+" "+strings.Join(a.Hostnames, " "))
	}
	return lines
}

// podRoutes are the addresses every pod of the cluster reaches: its API
// server in-cluster at 127.0.0.1:443 (KUBERNETES_SERVICE_HOST/PORT, see
// containerEnv) and at its own port (kubeconfigs written by the harness),
// and the routes of the configuration (the hub's API server, which the
// addons' hub kubeconfigs name https://127.0.0.1:<hub port>, and the
// endpoints the environment publishes to every pod: cluster-proxy's
// proxy-server entry point).
func (k *Kubelet) podRoutes() []sandbox.Route {
	routes := []sandbox.Route{{Inside: "127.0.0.1:443", Host: process.HostPort(k.cp.Port)}, sandbox.SameRoute(k.cp.Port)}
	return append(routes, k.cfg.Routes...)
}
