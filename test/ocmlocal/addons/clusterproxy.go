//go:build linux

package addons

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	// ClusterProxy is cluster-proxy's addon name.
	ClusterProxy = "cluster-proxy"
	// proxyImage is the image cluster-proxy v0.10.0's chart uses for its
	// manager, controllers, user server, proxy-server and agents.
	proxyImage = "quay.io/open-cluster-management/cluster-proxy:v0.10.0"
	// The ANP proxy-server's fixed ports inside its pod: 8090 for clients
	// (the user server), 8091 for agents.
	proxyServerPort = 8090
	proxyAgentPort  = 8091
	userServerPort  = 9092
	// userServerService is the user server's Service (and Deployment) name.
	userServerService = "cluster-proxy-addon-user"
)

// UserServer is cluster-proxy's user server: a request to
// URL/<cluster>/api/... reaches that cluster's API server, with the bearer
// token forwarded.
type UserServer struct {
	URL    string
	CAData []byte
}

// ProxyPorts are the host ports of cluster-proxy's proxy-server (for the
// user server, for agents) and of its user server. Every pod reaches the
// first two (the environment publishes them before any pod starts).
type ProxyPorts struct{ Server, Agent, User int }

// StartClusterProxy installs cluster-proxy as its chart does with the user
// server enabled: the ManagedProxyConfiguration, the ClusterManagementAddOn,
// and the manager and user-server Deployments, which the hub kubelet runs.
// The manager then deploys the ANP proxy-server (also run by the hub
// kubelet) and, through ManifestWorks, the agents on every cluster.
//
// Rewrites, all because there are no Services: the proxy-server's entry
// point for agents is the Hostname 127.0.0.1 with a host port that every pod
// reaches; the user server dials the proxy-server at 127.0.0.1 and a host
// port instead of proxy-entrypoint.<ns>.svc:8090; the user server is
// reached at https://127.0.0.1:<port> instead of the cluster-proxy-addon-user
// Service (its certificate is valid for 127.0.0.1).
func (a *Addons) StartClusterProxy(ctx context.Context, ports ProxyPorts) (*UserServer, error) {
	start := time.Now()
	a.HubKubelet.ExposePort(hubNamespace, ClusterProxy, proxyServerPort, ports.Server)
	a.HubKubelet.ExposePort(hubNamespace, ClusterProxy, proxyAgentPort, ports.Agent)
	a.HubKubelet.ExposePort(hubNamespace, userServerService, userServerPort, ports.User)
	hub, err := a.hubClient()
	if err != nil {
		return nil, err
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ClusterProxy, Namespace: hubNamespace}},
		clusterAdminBinding("ocmlocal:"+ClusterProxy, ClusterProxy),
		managedProxyConfiguration(ports.Agent),
		proxyClusterManagementAddOn(),
		proxyManagerDeployment(),
		proxyUserServerDeployment(ports.Server),
	}
	for _, obj := range objects {
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, obj)); err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if err := a.EnableAddon(ctx, ClusterProxy, InstallNamespace); err != nil {
		return nil, err
	}
	proxy, err := waitUserServer(ctx, hub, ports.User)
	if err != nil {
		return nil, err
	}
	if err := a.WaitAvailable(ctx, ClusterProxy); err != nil {
		return nil, err
	}
	a.Progress("cluster-proxy available on %d clusters, user server at %s, in %s", len(a.Clusters), proxy.URL, process.Since(start))
	return proxy, nil
}

// ReachUserServer lets the pod of a hub Deployment reach cluster-proxy's
// user server where the profiles' open-cluster-management entry names it
// (this harness's address, or the name of its Service, as cluster-proxy's
// own writer publishes it), as any pod reaches a Service. Call it before
// the pod starts.
func ReachUserServer(hubKubelet *kubelet.Kubelet, namespace, deployment string, userHostPort int) {
	hubKubelet.ReachPort(namespace, deployment, userHostPort)
	hubKubelet.ReachService(namespace, deployment, userServerService, hubNamespace, userServerPort, userHostPort)
}

// waitUserServer waits for the user server's certificate (which the manager
// issues into Secret cluster-proxy-user-serving-cert, signed by the
// cluster-proxy signer whose certificate Secret proxy-server-ca holds) and
// for the server to answer with it.
func waitUserServer(ctx context.Context, hub client.Client, port int) (*UserServer, error) {
	signer := &corev1.Secret{}
	err := process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		if err := hub.Get(ctx, types.NamespacedName{Namespace: hubNamespace, Name: "proxy-server-ca"}, signer); err != nil {
			return false, err
		}
		return tlsReachable(process.HostPort(port), signer.Data["ca.crt"])
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for cluster-proxy's user server: %w", err)
	}
	return &UserServer{URL: "https://" + process.HostPort(port), CAData: signer.Data["ca.crt"]}, nil
}

// clusterAdminBinding gives an addon chart's service account (in
// open-cluster-management-addon) cluster-admin on the hub; the charts' own
// ClusterRoles are narrower.
func clusterAdminBinding(name, serviceAccount string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: serviceAccount, Namespace: hubNamespace}},
	}
}

func managedProxyConfiguration(agentHostPort int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "proxy.open-cluster-management.io/v1alpha1",
		"kind":       "ManagedProxyConfiguration",
		"metadata":   map[string]any{"name": ClusterProxy},
		"spec": map[string]any{
			"authentication": map[string]any{"dump": map[string]any{"secrets": map[string]any{}}, "signer": map[string]any{"type": "SelfSigned"}},
			"proxyServer": map[string]any{
				"image": proxyImage, "replicas": int64(1), "namespace": hubNamespace,
				"entrypoint": map[string]any{
					"type": "Hostname", "hostname": map[string]any{"value": "127.0.0.1"}, "port": int64(agentHostPort),
				},
			},
			"proxyAgent": map[string]any{"image": proxyImage, "replicas": int64(1)},
			"userServer": map[string]any{},
		},
	}}
}

// proxyClusterManagementAddOn is the chart's, in v1alpha1 (converted by the
// webhook), with a manual install strategy: the harness enables the addon
// per cluster.
func proxyClusterManagementAddOn() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1",
		"kind":       "ClusterManagementAddOn",
		"metadata": map[string]any{"name": ClusterProxy,
			"annotations": map[string]any{"addon.open-cluster-management.io/lifecycle": "addon-manager"}},
		"spec": map[string]any{
			"addOnMeta": map[string]any{"displayName": ClusterProxy, "description": ClusterProxy},
			"supportedConfigs": []any{
				map[string]any{"group": "proxy.open-cluster-management.io", "resource": "managedproxyconfigurations", "defaultConfig": map[string]any{"name": ClusterProxy}},
				map[string]any{"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs"},
			},
			"installStrategy": map[string]any{"type": "Manual"},
		},
	}}
}

// ProxyManagerDeployment is cluster-proxy's hub manager Deployment (in
// namespace open-cluster-management-addon); its --feature-gates turn
// cluster-proxy's own ClusterProfile writer on.
const ProxyManagerDeployment = "cluster-proxy-addon-manager"

// proxyManagerDeployment is the chart's manager Deployment, with the
// service proxy enabled (the user server reaches clusters through it).
func proxyManagerDeployment() *appsv1.Deployment {
	return addonHubDeployment(ClusterProxy, ProxyManagerDeployment, corev1.Container{
		Name: "manager", Image: proxyImage, Command: []string{"/manager"},
		Args: []string{
			"--leader-elect=false",
			"--signer-secret-namespace=" + hubNamespace,
			"--enable-kube-api-proxy=true", "--enable-service-proxy=true",
			"--agent-install-namespace=" + InstallNamespace,
		},
	})
}

// proxyUserServerDeployment is the chart's cluster-proxy-addon-user
// Deployment (controllers and user server), with the proxy-server's address
// rewritten as said on startClusterProxy.
func proxyUserServerDeployment(serverHostPort int) *appsv1.Deployment {
	d := addonHubDeployment(ClusterProxy, userServerService,
		corev1.Container{
			Name: "controllers", Image: proxyImage, Command: []string{"/cluster-proxy"},
			Args: []string{"controllers", "--certificates-namespace=" + hubNamespace,
				"--signer-secret-namespace=" + hubNamespace, "--agent-image=" + proxyImage},
		},
		corev1.Container{
			Name: "user-server", Image: proxyImage, Command: []string{"/cluster-proxy"},
			Args: []string{"user-server",
				"--host=127.0.0.1", fmt.Sprintf("--port=%d", serverHostPort),
				"--proxy-ca-cert=/proxy-ca/ca.crt", "--proxy-cert=/proxy-client-tls/tls.crt", "--proxy-key=/proxy-client-tls/tls.key",
				fmt.Sprintf("--server-port=%d", userServerPort), "--server-key=/user-tls/tls.key", "--server-cert=/user-tls/tls.crt",
				"--service-proxy-ca-cert=/proxy-ca/ca.crt", "--agent-install-namespace=" + InstallNamespace,
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "user-tls-vol", MountPath: "/user-tls", ReadOnly: true},
				{Name: "proxy-server-ca", MountPath: "/proxy-ca", ReadOnly: true},
				{Name: "proxy-client-cert", MountPath: "/proxy-client-tls", ReadOnly: true},
			},
		})
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		secretVolume("user-tls-vol", "cluster-proxy-user-serving-cert"),
		secretVolume("proxy-server-ca", "proxy-server-ca"),
		secretVolume("proxy-client-cert", "proxy-client"),
	}
	return d
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}

// DialServices dials as a pod on the hub would reach cluster-proxy's user
// server by its Service (cluster-proxy-addon-user.open-cluster-management-
// addon[.svc[.cluster.local]]:9092, the server cluster-proxy's own
// ClusterProfile writer publishes): there is no cluster DNS or kube-proxy
// here, so those names go to the user server's host port. Other addresses
// are dialled as they are.
func (u *UserServer) DialServices(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err == nil && u != nil && port == strconv.Itoa(userServerPort) &&
		strings.HasPrefix(host, userServerService+"."+hubNamespace) {
		address = strings.TrimPrefix(u.URL, "https://")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// tlsReachable reports whether a TLS server trusted by caData answers at addr.
func tlsReachable(addr string, caData []byte) (bool, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caData)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		return false, err
	}
	conn.Close()
	return true, nil
}
