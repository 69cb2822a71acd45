//go:build linux

package controlplane

import (
	"fmt"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// StandaloneAPIServer prepares a kube-apiserver that a test starts and stops
// itself, on etcd at 127.0.0.1:etcdPort: certificates and an admin
// kubeconfig (as a control plane of this package has) written once into
// dir, so that every start of argv serves on the same port with the same
// certificates and its clients reconnect as to a restarted API server.
func StandaloneAPIServer(bin, dir string, port, etcdPort int) (argv []string, kubeconfigPath string, err error) {
	cp := &ControlPlane{Name: "standalone", dir: dir, Port: port, URL: "https://" + process.HostPort(port)}
	if err := cp.writeCertificates(); err != nil {
		return nil, "", fmt.Errorf("certificates of a standalone API server: %w", err)
	}
	if err := cp.writeAdminKubeconfig(); err != nil {
		return nil, "", err
	}
	return cp.apiServerArgs(bin, etcdPort), cp.KubeconfigPath, nil
}
