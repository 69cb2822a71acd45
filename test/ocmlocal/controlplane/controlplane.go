//go:build linux

// Package controlplane runs one Kubernetes control plane of the harness on
// 127.0.0.1: etcd, kube-apiserver (its certificates from package pki, a
// watch audit log, and an egress selector that sends Service traffic to
// the harness's service network) and kube-controller-manager with the
// controllers OCM relies on (CSR signing, garbage collection, namespace
// deletion, service accounts, ClusterRole aggregation). A standalone API
// server that a test starts and stops itself is prepared here too.
package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/pki"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// ControlPlane is one Kubernetes control plane: etcd and kube-apiserver,
// and kube-controller-manager.
type ControlPlane struct {
	Name string
	// URL is the API server's address, https://127.0.0.1:<port>.
	URL string
	// Port is the API server's secure port on 127.0.0.1.
	Port int
	// Config authenticates as a cluster admin (group system:masters).
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file with the same admin identity.
	KubeconfigPath string
	// CAData is the PEM CA that signs the API server's serving certificate
	// and every client certificate it accepts.
	CAData []byte

	dir                  string
	etcdClient, etcdPeer int
	ca                   *pki.Authority
	apiserver            *process.Process
	// egressConfig routes the API server's traffic to Services through the
	// harness (package servicenet); empty for a standalone API server.
	egressConfig string
}

// apiServerHosts are the names the serving certificate is valid for: the
// loopback address the harness uses, and the in-cluster names a pod uses
// (the pod sandbox maps them to 127.0.0.1).
var apiServerHosts = []string{
	"127.0.0.1", "localhost", "10.0.0.1", "kubernetes", "kubernetes.default",
	"kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
}

// New prepares a control plane named name in dir: its certificates and
// the free ports its etcd and API server will listen on.
func New(name, dir string) (*ControlPlane, error) {
	cp := &ControlPlane{Name: name, dir: dir}
	if err := cp.writeCertificates(); err != nil {
		return nil, fmt.Errorf("certificates of %s: %w", name, err)
	}
	ports, err := process.FreePorts(3)
	if err != nil {
		return nil, err
	}
	cp.etcdClient, cp.etcdPeer = ports[0], ports[1]
	cp.Port = ports[2]
	cp.URL = "https://" + process.HostPort(cp.Port)
	return cp, nil
}

// Start starts etcd and the API server (with the watch audit log, and
// egressConfig as its egress selector configuration when set), writes the
// admin kubeconfig and waits until the API server is ready.
func (cp *ControlPlane) Start(ctx context.Context, procs *process.Group, etcd, apiServer, egressConfig string) error {
	cp.egressConfig = egressConfig
	if _, err := procs.Start(process.Spec{Name: cp.Name + "-etcd", Argv: etcdArgs(etcd, cp.dir, cp.etcdClient, cp.etcdPeer)}); err != nil {
		return err
	}
	audit, err := cp.auditArgs()
	if err != nil {
		return err
	}
	cp.apiserver, err = procs.Start(process.Spec{Name: cp.Name + "-kube-apiserver", Argv: append(cp.apiServerArgs(apiServer, cp.etcdClient), audit...)})
	if err != nil {
		return err
	}
	if err := cp.writeAdminKubeconfig(); err != nil {
		return err
	}
	if err := cp.waitReady(ctx); err != nil {
		return fmt.Errorf("API server of %s: %w", cp.Name, err)
	}
	return nil
}

// StartControllerManager starts kube-controller-manager with the
// controllers the harness needs (controllerManagerArgs).
func (cp *ControlPlane) StartControllerManager(procs *process.Group, bin string) error {
	_, err := procs.Start(process.Spec{Name: cp.Name + "-kube-controller-manager", Argv: cp.controllerManagerArgs(bin)})
	return err
}

// Dir is the control plane's directory: its certificates, etcd's data and
// its configuration files.
func (cp *ControlPlane) Dir() string { return cp.dir }

func (cp *ControlPlane) file(name string) string { return filepath.Join(cp.dir, "pki", name) }

func (cp *ControlPlane) writeCertificates() error {
	ca, err := pki.NewAuthority(cp.Name + "-ca")
	if err != nil {
		return err
	}
	cp.ca, cp.CAData = ca, ca.CertPEM
	serving, err := ca.Serving("kube-apiserver", apiServerHosts...)
	if err != nil {
		return err
	}
	admin, err := ca.Client("ocmlocal-admin", "system:masters")
	if err != nil {
		return err
	}
	// A separate CA for the request-header (front proxy) client: anyone
	// holding a certificate from it may assert identities, so it must not be
	// the CA that signs CSRs. Aggregated API servers and OCM's library-go
	// servers read it from extension-apiserver-authentication.
	frontProxyCA, err := pki.NewAuthority(cp.Name + "-front-proxy-ca")
	if err != nil {
		return err
	}
	frontProxy, err := frontProxyCA.Client("front-proxy-client")
	if err != nil {
		return err
	}
	saKey, saPub, err := pki.ServiceAccountKey()
	if err != nil {
		return err
	}
	return pki.WriteFiles(filepath.Join(cp.dir, "pki"), map[string][]byte{
		"ca.crt": ca.CertPEM, "ca.key": ca.KeyPEM,
		"apiserver.crt": serving.CertPEM, "apiserver.key": serving.KeyPEM,
		"admin.crt": admin.CertPEM, "admin.key": admin.KeyPEM,
		"sa.key": saKey, "sa.pub": saPub,
		"front-proxy-ca.crt":     frontProxyCA.CertPEM,
		"front-proxy-client.crt": frontProxy.CertPEM, "front-proxy-client.key": frontProxy.KeyPEM,
	})
}

func etcdArgs(bin, dir string, clientPort, peerPort int) []string {
	client, peer := "http://"+process.HostPort(clientPort), "http://"+process.HostPort(peerPort)
	return []string{bin,
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		// A test control plane survives no crash; fsync only costs time.
		"--unsafe-no-fsync=true",
	}
}

func (cp *ControlPlane) apiServerArgs(bin string, etcdPort int) []string {
	var egress []string
	if cp.egressConfig != "" {
		egress = []string{"--egress-selector-config-file=" + cp.egressConfig}
	}
	return append([]string{bin,
		"--etcd-servers=http://" + process.HostPort(etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.Port),
		"--cert-dir=" + filepath.Join(cp.dir, "apiserver-certs"),
		"--tls-cert-file=" + cp.file("apiserver.crt"), "--tls-private-key-file=" + cp.file("apiserver.key"),
		"--client-ca-file=" + cp.file("ca.crt"),
		"--requestheader-client-ca-file=" + cp.file("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + cp.file("front-proxy-client.crt"),
		"--proxy-client-key-file=" + cp.file("front-proxy-client.key"),
		// The kubernetes Service cannot have a loopback endpoint; pods reach
		// the API server through the sandbox instead.
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + cp.file("sa.pub"),
		"--service-account-signing-key-file=" + cp.file("sa.key"),
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// Flow control only costs CPU on a test machine.
		"--enable-priority-and-fairness=false",
	}, egress...)
}

// controllerManagerArgs runs the controllers the harness needs: CSR signing
// (with the control plane's CA, so CSR-issued client certificates are
// accepted), approving and cleaning, garbage collection, namespace deletion,
// service account and token controllers, the kube-root-ca.crt publisher, and
// ClusterRole aggregation (the klusterlet's work agent applies manifests
// with the rights of the aggregated admin role).
func (cp *ControlPlane) controllerManagerArgs(bin string) []string {
	return []string{bin,
		"--kubeconfig=" + cp.KubeconfigPath,
		"--authentication-kubeconfig=" + cp.KubeconfigPath,
		"--authorization-kubeconfig=" + cp.KubeconfigPath,
		"--bind-address=127.0.0.1", "--secure-port=0",
		"--leader-elect=false",
		"--controllers=certificatesigningrequest-signing-controller,certificatesigningrequest-approving-controller," +
			"certificatesigningrequest-cleaner-controller,garbage-collector-controller,namespace-controller," +
			"serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller," +
			"clusterrole-aggregation-controller",
		"--cluster-signing-cert-file=" + cp.file("ca.crt"),
		"--cluster-signing-key-file=" + cp.file("ca.key"),
		"--service-account-private-key-file=" + cp.file("sa.key"),
		"--root-ca-file=" + cp.file("ca.crt"),
		"--use-service-account-credentials=false",
		// Fast garbage collection and namespace deletion for tests.
		"--concurrent-gc-syncs=5", "--concurrent-namespace-syncs=5",
	}
}

func (cp *ControlPlane) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	return process.Poll(ctx, 90*time.Second, cp.apiserver, func(ctx context.Context) (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", err
	})
}

// Clientset returns a typed admin client of the control plane.
func (cp *ControlPlane) Clientset() (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(cp.Config)
}
