//go:build linux

package controlplane

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func (cp *ControlPlane) writeAdminKubeconfig() error {
	cert, key := cp.file("admin.crt"), cp.file("admin.key")
	cp.Config = &rest.Config{
		Host:            cp.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAData, CertFile: cert, KeyFile: key},
		QPS:             100, Burst: 200,
	}
	cp.KubeconfigPath = filepath.Join(cp.dir, "admin.kubeconfig")
	return writeKubeconfig(cp.KubeconfigPath, cp.Name, cp.URL, cp.CAData, func(u *clientcmdapi.AuthInfo) {
		u.ClientCertificate, u.ClientKey = cert, key
	})
}

// writeKubeconfig writes a one-context kubeconfig for server, with the user
// filled in by setUser.
func writeKubeconfig(path, name, server string, caData []byte, setUser func(*clientcmdapi.AuthInfo)) error {
	if err := clientcmd.WriteToFile(*kubeconfig(name, server, caData, setUser), path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// KubeconfigBytes is writeKubeconfig's content, e.g. for a Secret.
func KubeconfigBytes(name, server string, caData []byte, setUser func(*clientcmdapi.AuthInfo)) ([]byte, error) {
	return clientcmd.Write(*kubeconfig(name, server, caData, setUser))
}

func kubeconfig(name, server string, caData []byte, setUser func(*clientcmdapi.AuthInfo)) *clientcmdapi.Config {
	user := clientcmdapi.NewAuthInfo()
	setUser(user)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	cfg.AuthInfos[name] = user
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return cfg
}
