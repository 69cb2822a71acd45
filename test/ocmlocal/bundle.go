//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// InstallBundle installs this bundle's chart as a platform engineer would,
// with the gates a consumer of every kind needs on (mirror, both access
// entries, the syncer, the agent) and the proxy entry naming the user server
// where it listens here (Services have no addresses without a kube-proxy).
// It returns when the hub kubelet runs the manager.
func (e *Env) InstallBundle(ctx context.Context, release, namespace string) error {
	chart, err := chartrender.Load(chartrender.ChartDir("clusterprofile-manager"))
	if err != nil {
		return err
	}
	proxy, err := url.Parse(e.Proxy.URL)
	if err != nil {
		return fmt.Errorf("the user server's URL: %w", err)
	}
	port, err := strconv.Atoi(proxy.Port())
	if err != nil {
		return fmt.Errorf("the user server's port: %w", err)
	}
	values := map[string]any{
		"featureGates": map[string]any{"clusterProfile": true, "clusterProfileAccessProvider": true,
			"clusterProfileDirectAccess": true, "clusterProfileCredSyncer": true, "clusterProfileAgent": true},
		"userServer": map[string]any{"host": proxy.Hostname(), "port": port},
		"agent":      map[string]any{"period": "5s"},
	}
	if err := e.InstallChart(ctx, chart, release, namespace, values); err != nil {
		return err
	}
	return e.WaitDeploymentAvailable(ctx, namespace, release)
}

// PrepareForConsumers gives a managed cluster what the demo's and the
// suite's consumers need: a node (what the agent reports on) and the right
// for the consumer's ManagedServiceAccount to list namespaces.
func (c *ManagedCluster) PrepareForConsumers(ctx context.Context) error {
	if err := c.RegisterNode(ctx, c.Name+"-node", "8", "32Gi"); err != nil {
		return err
	}
	cs, err := c.Clientset()
	if err != nil {
		return err
	}
	return consumer.AllowListingNamespaces(ctx, cs)
}
