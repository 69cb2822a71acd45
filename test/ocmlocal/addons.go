//go:build linux

package ocmlocal

import (
	"context"
	"net"

	"golang.org/x/sync/errgroup"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/addons"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// addons installs and enables the addons on the hub, for the clusters
// that run now.
func (e *Env) addonSetup() *addons.Addons {
	a := &addons.Addons{Hub: e.Hub, HubKubelet: e.kubeletOf(e.Hub), Proxy: e.Proxy, Progress: e.progressf}
	for _, c := range e.Clusters {
		a.Clusters = append(a.Clusters, c.Name)
	}
	return a
}

// startAddons starts each addon's hub side and enables
// the addon on every cluster as `clusteradm addon enable` does. The addons
// come up side by side: most of their start-up is waiting for the addon
// lease to be seen.
func (e *Env) startAddons(ctx context.Context) error {
	a := e.addonSetup()
	var proxy *addons.UserServer
	g, gctx := errgroup.WithContext(ctx)
	if e.opts.ClusterProxy {
		g.Go(func() (err error) {
			proxy, err = a.StartClusterProxy(gctx, e.proxyPorts)
			return err
		})
	}
	if e.opts.ManagedServiceAccount {
		g.Go(func() error { return a.StartManagedServiceAccount(gctx) })
	}
	err := g.Wait()
	e.Proxy = proxy
	return err
}

// reserveProxyPorts picks the host ports of the proxy-server (for the user
// server, for agents) and of the user server, and publishes the first two
// to every pod.
func (e *Env) reserveProxyPorts() error {
	ports, err := process.FreePorts(3)
	if err != nil {
		return err
	}
	e.proxyPorts = addons.ProxyPorts{Server: ports[0], Agent: ports[1], User: ports[2]}
	e.publishedPorts = append(e.publishedPorts, ports[0], ports[1])
	return nil
}

// ReachUserServer lets the pod of a hub Deployment reach cluster-proxy's
// user server where the profiles' open-cluster-management entry names it
// (this harness's address, or the name of its Service, as cluster-proxy's
// own writer publishes it), as any pod reaches a Service. Call it before
// the pod starts.
func (e *Env) ReachUserServer(namespace, deployment string) {
	addons.ReachUserServer(e.kubeletOf(e.Hub), namespace, deployment, e.proxyPorts.User)
}

// DialServices dials as a pod on the hub would reach cluster-proxy's user
// server by its Service (cluster-proxy-addon-user.open-cluster-management-
// addon[.svc[.cluster.local]]:9092, the server cluster-proxy's own
// ClusterProfile writer publishes): there is no cluster DNS or kube-proxy
// here, so those names go to the user server's host port. Other addresses
// are dialled as they are.
func (e *Env) DialServices(ctx context.Context, network, address string) (net.Conn, error) {
	return e.Proxy.DialServices(ctx, network, address)
}

// RotateUserServerCertificate replaces the user server's certificate, the
// trust anchor consumers get in a profile's cluster-proxy entry, as an
// operator would: delete Secret cluster-proxy-user-serving-cert so that
// cluster-proxy's manager issues a new key pair, then restart the user
// server as `kubectl rollout restart` does. It returns once the server
// presents the new certificate, with the new tls.crt.
func (e *Env) RotateUserServerCertificate(ctx context.Context) ([]byte, error) {
	return e.addonSetup().RotateUserServerCertificate(ctx)
}

// EnableAddon creates the addon's ManagedClusterAddOn in every cluster
// namespace, as `clusteradm addon enable --names <addon>` does.
func (e *Env) EnableAddon(ctx context.Context, addon, installNamespace string) error {
	return e.addonSetup().EnableAddon(ctx, addon, installNamespace)
}

// EnableAddonOn creates the addon's ManagedClusterAddOn in one cluster
// namespace, as `clusteradm addon enable --names <addon> --clusters
// <cluster>` does. One that exists is kept; one still being deleted is an
// error, since it would soon be gone.
func (e *Env) EnableAddonOn(ctx context.Context, addon, installNamespace, cluster string) error {
	return e.addonSetup().EnableAddonOn(ctx, addon, installNamespace, cluster)
}

// WaitAddonAvailable waits until the addon is Available on every cluster.
func (e *Env) WaitAddonAvailable(ctx context.Context, addon string) error {
	return e.addonSetup().WaitAvailable(ctx, addon)
}

// SetAddonManagerFeatureGates sets an addon manager Deployment's
// --feature-gates (in namespace open-cluster-management-addon), as
// upgrading its chart with featureGates.<gate> does: e.g.
// (addons.ProxyManagerDeployment, {"ClusterProfileAccessProvider": true})
// or (addons.MSAManagerDeployment, {"ClusterProfileCredSyncer": true}). An
// empty map removes the flag. It returns once the hub kubelet runs the new
// template.
func (e *Env) SetAddonManagerFeatureGates(ctx context.Context, deployment string, gates map[string]bool) error {
	return e.addonSetup().SetManagerFeatureGates(ctx, deployment, gates)
}
