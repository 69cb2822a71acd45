//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"strconv"

	"helm.sh/helm/v3/pkg/chart"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// InstallBundle installs this bundle's chart as a platform engineer would,
// with the gates a consumer of every kind needs on (mirror, both access
// entries, the syncer, the agent) and the proxy entry naming the user server
// where it listens here (Services have no addresses without a kube-proxy).
// It returns when the hub kubelet runs the manager.
func (e *Env) InstallBundle(ctx context.Context, release, namespace string) error {
	chart, values, err := e.bundle(nil)
	if err != nil {
		return err
	}
	if err := e.InstallChart(ctx, chart, release, namespace, values); err != nil {
		return err
	}
	return e.WaitDeploymentAvailable(ctx, namespace, release)
}

// UpgradeBundle upgrades the release InstallBundle installed, with agent
// values set on top of InstallBundle's (e.g. {"installStrategy": "Manual"}).
func (e *Env) UpgradeBundle(ctx context.Context, release, namespace string, agent map[string]any) error {
	chart, values, err := e.bundle(agent)
	if err != nil {
		return err
	}
	return e.UpgradeChart(ctx, chart, release, namespace, values)
}

// bundle is the chart and InstallBundle's values, with agent values added.
func (e *Env) bundle(agent map[string]any) (*chart.Chart, map[string]any, error) {
	c, err := chartrender.Load(chartrender.ChartDir("clusterprofile-manager"))
	if err != nil {
		return nil, nil, err
	}
	proxy, err := url.Parse(e.Proxy.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("the user server's URL: %w", err)
	}
	port, err := strconv.Atoi(proxy.Port())
	if err != nil {
		return nil, nil, fmt.Errorf("the user server's port: %w", err)
	}
	agentValues := map[string]any{"period": "5s"}
	maps.Copy(agentValues, agent)
	values := map[string]any{
		"featureGates": map[string]any{"clusterProfile": true, "clusterProfileAccessProvider": true,
			"clusterProfileDirectAccess": true, "clusterProfileCredSyncer": true, "clusterProfileAgent": true},
		"userServer": map[string]any{"host": proxy.Hostname(), "port": port},
		"agent":      agentValues,
	}
	return c, values, nil
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
