//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"strconv"

	"helm.sh/helm/v3/pkg/chart"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/argocdcheck"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
)

// InstallBundle installs this bundle's chart as a platform engineer would,
// with the gates a consumer of every kind needs on (mirror, both access
// entries, the syncer, the agent) and the proxy entry naming the user server
// where it listens here (Services have no addresses without a kube-proxy).
// With Options.Registry the chart comes from the local registry (`helm
// install oci://...`) and runs the image there.
// It returns when the hub kubelet runs the manager.
func (e *Env) InstallBundle(ctx context.Context, release, namespace string) error {
	return e.installBundle(ctx, release, namespace, "")
}

// InstallPreviousBundle installs the previous release (Options.PreviousRelease)
// as InstallBundle installs this one: its chart from the local registry, with
// its image (the chart's default tag, the release's version label).
func (e *Env) InstallPreviousBundle(ctx context.Context, release, namespace string) error {
	if e.Registry == nil || e.Registry.PreviousVersion == "" {
		return fmt.Errorf("the previous release needs Options.Registry and Options.PreviousRelease")
	}
	return e.installBundle(ctx, release, namespace, e.Registry.PreviousVersion)
}

// installBundle installs the bundle's chart of version (this one's when
// empty) and waits for the hub kubelet to run the manager.
func (e *Env) installBundle(ctx context.Context, release, namespace, version string) error {
	chart, values, err := e.bundle(version, nil)
	if err != nil {
		return err
	}
	if err := e.InstallChart(ctx, chart, release, namespace, values); err != nil {
		return err
	}
	return e.WaitDeploymentAvailable(ctx, namespace, release)
}

// UpgradeBundle upgrades the release InstallBundle installed, with values
// set on top of InstallBundle's, a map at a time (e.g. {"agent":
// {"installStrategy": "Manual"}}), and waits for the manager to run them.
func (e *Env) UpgradeBundle(ctx context.Context, release, namespace string, overrides map[string]any) error {
	chart, values, err := e.bundle("", overrides)
	if err != nil {
		return err
	}
	if err := e.UpgradeChart(ctx, chart, release, namespace, values); err != nil {
		return err
	}
	return e.WaitDeploymentAvailable(ctx, namespace, release)
}

// bundle is the chart of version, this one's when empty (from the
// registry, with Options.Registry), and InstallBundle's values, with
// overrides merged in a map deep.
func (e *Env) bundle(version string, overrides map[string]any) (*chart.Chart, map[string]any, error) {
	var c *chart.Chart
	var err error
	switch {
	case e.Registry == nil:
		c, err = chartrender.Load(chartrender.ChartDir(registry.BundleChart))
	case version == "":
		c, err = e.Registry.PullChart(e.Registry.BundleTag)
	default:
		c, err = e.Registry.PullChart(version)
	}
	if err != nil {
		return nil, nil, err
	}
	values, err := e.bundleValues(version == "", overrides)
	return c, values, err
}

// bundleValues are InstallBundle's values with overrides merged in a map
// deep; current says the chart is this release's (which has the Argo CD
// and placement decisions gates).
func (e *Env) bundleValues(current bool, overrides map[string]any) (map[string]any, error) {
	proxy, err := url.Parse(e.Proxy.URL)
	if err != nil {
		return nil, fmt.Errorf("the user server's URL: %w", err)
	}
	port, err := strconv.Atoi(proxy.Port())
	if err != nil {
		return nil, fmt.Errorf("the user server's port: %w", err)
	}
	values := map[string]any{
		"featureGates": map[string]any{"clusterProfile": true, "clusterProfileAccessProvider": true,
			"clusterProfileDirectAccess": true, "clusterProfileCredSyncer": true, "clusterProfileAgent": true},
		"userServer": map[string]any{"host": proxy.Hostname(), "port": port},
		"agent":      map[string]any{"period": "5s"},
	}
	if e.Registry != nil {
		// The tag stays the chart's default, its appVersion: the registry
		// holds each release's image under its version.
		values["image"] = map[string]any{"repository": e.Registry.BundleRepository}
	}
	if current {
		values["featureGates"].(map[string]any)["clusterProfilePlacementDecision"] = true
	}
	if e.opts.ArgoCD && current {
		values["featureGates"].(map[string]any)["clusterProfileArgoCD"] = true
		values["argocd"] = argocdcheck.Values(e.ArgoCDPlugin)
	}
	for key, override := range overrides {
		if base, ok := values[key].(map[string]any); ok {
			if nested, ok := override.(map[string]any); ok {
				maps.Copy(base, nested)
				continue
			}
		}
		values[key] = override
	}
	return values, nil
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
