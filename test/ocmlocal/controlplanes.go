//go:build linux

package ocmlocal

import (
	"context"
	"path/filepath"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/servicenet"
)

// ControlPlane is one Kubernetes control plane of the environment: etcd,
// kube-apiserver and kube-controller-manager (see package controlplane).
type ControlPlane = controlplane.ControlPlane

// startControlPlane starts a control plane whose API server reaches
// Services through its service network, with kube-controller-manager when
// asked.
func (e *Env) startControlPlane(ctx context.Context, name string, controllerManager bool) (*ControlPlane, error) {
	start := time.Now()
	cp, err := controlplane.New(name, filepath.Join(e.WorkDir, name))
	if err != nil {
		return nil, err
	}
	// Short socket path: unix socket paths stay under 108 bytes.
	svcnet, egressConfig, err := servicenet.Listen(cp, filepath.Join(e.WorkDir, "s"), func() *kubelet.Kubelet { return e.kubeletOf(cp) }, e.progressf)
	if err != nil {
		return nil, err
	}
	e.addServiceNetwork(svcnet)
	if err := cp.Start(ctx, e.procs, e.bins.Etcd, e.bins.KubeAPIServer, egressConfig); err != nil {
		return nil, err
	}
	if err := svcnet.Serve(); err != nil {
		return nil, err
	}
	if controllerManager {
		if err := cp.StartControllerManager(e.procs, e.bins.Path("kube-controller-manager")); err != nil {
			return nil, err
		}
	}
	e.progressf("%s control plane up at %s in %s", name, cp.URL, process.Since(start))
	return cp, nil
}

func (e *Env) addServiceNetwork(n *servicenet.Network) {
	e.kubeletsMu.Lock()
	defer e.kubeletsMu.Unlock()
	e.serviceNets = append(e.serviceNets, n)
}
