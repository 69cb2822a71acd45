//go:build linux

// Package servicenet is the harness's service network: how a control
// plane's API server reaches Services (the operators' webhooks, Kueue's
// visibility API) through its egress selector, in place of a cluster
// network and kube-proxy; and the EndpointSlice a Service's APIService
// needs.
package servicenet

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// The service network: how a control plane's API server reaches Services,
// i.e. the webhooks (admission and CRD conversion) that OCM's cluster-manager
// operator registers by Service reference, as on any cluster.
//
// The API server resolves a webhook's Service to its ClusterIP and port
// (the default resolver) and dials that address through its egress selector
// for the "cluster" network. Here that selector is set (--egress-selector-
// config-file) to an HTTP CONNECT proxy on a unix socket, which the harness
// serves in place of a cluster network and kube-proxy: it maps the
// ClusterIP:port to the Service, the Service's selector to the pod the
// harness's kubelet runs, and the target port to that port inside the pod's
// sandbox (its port-forward socket). This is the mechanism Kubernetes has
// for control planes that do not sit on their cluster's network (the
// Konnectivity proxy uses it).
//
// The alternatives do not work here: --enable-aggregator-routing resolves a
// Service to its Endpoints, but Endpoints and EndpointSlices may not hold
// loopback addresses, and the pods have no other; ClusterIPs would have to
// be routed on the host, and this machine's network is loopback only.
// Webhooks registered by URL are not affected: the API server dials those
// through the "controlplane" network, which stays direct.

// egressSelectorConfig routes the API server's "cluster" traffic through
// the HTTP CONNECT proxy at socket.
func egressSelectorConfig(socket string) string {
	return `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: ` + socket + "\n"
}

// Network is one control plane's service proxy.
type Network struct {
	cp *controlplane.ControlPlane
	// kubeletOf returns the control plane's kubelet, which runs the pods
	// Services select (looked up on each connection: the kubelet starts
	// after the API server).
	kubeletOf func() *kubelet.Kubelet
	progress  func(format string, args ...any)
	listener  net.Listener
	client    kubernetes.Interface
}

// Listen writes the egress selector configuration of a control plane
// into its directory and listens on its proxy socket in the directory
// sockets (served once the API server is up: Serve). It returns the
// configuration's path, for the API server's --egress-selector-config-file.
func Listen(cp *controlplane.ControlPlane, sockets string, kubeletOf func() *kubelet.Kubelet, progress func(format string, args ...any)) (*Network, string, error) {
	// Short socket path: unix socket paths stay under 108 bytes.
	if err := os.MkdirAll(sockets, 0o755); err != nil {
		return nil, "", err
	}
	socket := filepath.Join(sockets, cp.Name+"-svc")
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		return nil, "", fmt.Errorf("service network of %s: %w", cp.Name, err)
	}
	config := filepath.Join(cp.Dir(), "egress-selector.yaml")
	if err := os.WriteFile(config, []byte(egressSelectorConfig(socket)), 0o644); err != nil {
		l.Close()
		return nil, "", err
	}
	return &Network{cp: cp, kubeletOf: kubeletOf, progress: progress, listener: l}, config, nil
}

// Serve answers CONNECT requests until the listener is closed.
func (n *Network) Serve() error {
	c, err := n.cp.Clientset()
	if err != nil {
		return err
	}
	n.client = c
	go func() {
		for {
			conn, err := n.listener.Accept()
			if err != nil {
				return
			}
			go n.connect(conn)
		}
	}()
	return nil
}

// Close stops answering.
func (n *Network) Close() { n.listener.Close() }

// connect reads one CONNECT request, resolves its address to a pod's port
// and relays the connection there.
func (n *Network) connect(conn net.Conn) {
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil || req.Method != http.MethodConnect {
		conn.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	forward, target, err := n.resolve(ctx, req.Host)
	if err != nil {
		n.progress("service network %s: CONNECT %s: %v", n.cp.Name, req.Host, err)
		fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		conn.Close()
		return
	}
	peer, err := net.Dial("unix", forward)
	if err != nil {
		fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		conn.Close()
		return
	}
	if _, err := fmt.Fprintf(peer, "%s\n", target); err != nil {
		peer.Close()
		conn.Close()
		return
	}
	// The API server sends nothing more before this answer, so nothing it
	// sent is left in the request's reader.
	fmt.Fprintf(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	podsandbox.Join(conn, peer)
}

// resolve maps a ClusterIP:port to the port-forward socket of the pod the
// Service selects and the address inside the pod.
func (n *Network) resolve(ctx context.Context, address string) (socket, target string, err error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", "", err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", "", err
	}
	services, err := n.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", err
	}
	for i := range services.Items {
		svc := &services.Items[i]
		if svc.Spec.ClusterIP != host {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if int(sp.Port) != port {
				continue
			}
			p := n.kubeletOf().SelectPod(svc.Namespace, svc.Spec.Selector)
			if p == nil {
				return "", "", fmt.Errorf("no running pod of Service %s/%s", svc.Namespace, svc.Name)
			}
			inside, err := targetPort(sp, p.Ports())
			if err != nil {
				return "", "", fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, err)
			}
			return p.Forward(), process.HostPort(inside), nil
		}
		return "", "", fmt.Errorf("service %s/%s has no port %d", svc.Namespace, svc.Name, port)
	}
	return "", "", fmt.Errorf("no Service has ClusterIP %s", host)
}

// targetPort is the pod port a Service port leads to.
func targetPort(sp corev1.ServicePort, named map[string]int32) (int, error) {
	switch {
	case sp.TargetPort.StrVal != "":
		p, ok := named[sp.TargetPort.StrVal]
		if !ok {
			return 0, fmt.Errorf("no container port named %s", sp.TargetPort.StrVal)
		}
		return int(p), nil
	case sp.TargetPort.IntVal != 0:
		return int(sp.TargetPort.IntVal), nil
	default:
		return int(sp.Port), nil
	}
}

// PublishEndpointSlice plays the EndpointSlice controller for a Service
// whose pod the control plane's kubelet runs: one ready endpoint with every
// port of the Service (by name, at its target port). The aggregator marks
// an APIService Available only once its Service has such a slice (then it
// dials the ClusterIP, through the service network, as for webhooks). A pod
// here has no address of its own and a slice may not hold a loopback one,
// so the endpoint names the Service's ClusterIP, where traffic goes anyway.
func PublishEndpointSlice(ctx context.Context, k *kubelet.Kubelet, namespace, service string) error {
	c, err := k.ControlPlane().Clientset()
	if err != nil {
		return err
	}
	svc, err := c.CoreV1().Services(namespace).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p := k.SelectPod(namespace, svc.Spec.Selector)
	if p == nil {
		return fmt.Errorf("no running pod of Service %s/%s", namespace, service)
	}
	slice, err := endpointSliceFor(svc, p.Ports())
	if err != nil {
		return err
	}
	_, err = c.DiscoveryV1().EndpointSlices(namespace).Create(ctx, slice, metav1.CreateOptions{})
	return client.IgnoreAlreadyExists(err)
}

// endpointSliceFor is the slice PublishEndpointSlice writes for a Service
// whose pod has these named ports.
func endpointSliceFor(svc *corev1.Service, named map[string]int32) (*discoveryv1.EndpointSlice, error) {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-ocmlocal", Namespace: svc.Namespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "ocmlocal"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{svc.Spec.ClusterIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	for _, sp := range svc.Spec.Ports {
		port, err := targetPort(sp, named)
		if err != nil {
			return nil, fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Protocol: ptr.To(sp.Protocol), Port: ptr.To(int32(port))})
	}
	return slice, nil
}
