//go:build linux

// Package charts installs, upgrades and uninstalls Helm charts on the
// harness's control planes as the helm CLI does, with Helm's Go library,
// the control plane's admin identity and the release records in Secrets;
// charts from the local registry are pulled with its client.
package charts

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/kube"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
)

// Helm runs Helm's actions on a control plane.
type Helm struct {
	// Registry is the local registry, nil without one.
	Registry *registry.Registry
	// Progress receives one line per action done.
	Progress func(format string, args ...any)
}

// Install installs a chart on a control plane as `helm install
// --create-namespace --take-ownership` does. Take-ownership: the harness
// installs the CRDs it needs (among them the ClusterProfile CRD on the
// hub) before any chart. The chart's Deployments are then run by the
// control plane's kubelet like any other.
func (h Helm) Install(ctx context.Context, cp *controlplane.ControlPlane, c *chart.Chart, release, namespace string, values map[string]any) error {
	start := time.Now()
	cfg, err := h.config(cp, namespace)
	if err != nil {
		return err
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = release, namespace
	install.CreateNamespace, install.TakeOwnership = true, true
	if _, err := install.RunWithContext(ctx, c, values); err != nil {
		return fmt.Errorf("helm install %s: %w", release, err)
	}
	h.Progress("chart %s installed on %s as release %s/%s in %s", c.Name(), cp.Name, namespace, release, process.Since(start))
	return nil
}

// Uninstall uninstalls a release as `helm uninstall` does, waiting for its
// objects to be deleted.
func (h Helm) Uninstall(cp *controlplane.ControlPlane, release, namespace string) error {
	start := time.Now()
	cfg, err := h.config(cp, namespace)
	if err != nil {
		return err
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.Wait, uninstall.Timeout = true, 2*time.Minute
	if _, err := uninstall.Run(release); err != nil {
		return fmt.Errorf("helm uninstall %s: %w", release, err)
	}
	h.Progress("release %s/%s uninstalled in %s", namespace, release, process.Since(start))
	return nil
}

// Upgrade upgrades a release with values, as `helm upgrade` does.
func (h Helm) Upgrade(ctx context.Context, cp *controlplane.ControlPlane, c *chart.Chart, release, namespace string, values map[string]any) error {
	start := time.Now()
	cfg, err := h.config(cp, namespace)
	if err != nil {
		return err
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = namespace
	if _, err := upgrade.RunWithContext(ctx, release, c, values); err != nil {
		return fmt.Errorf("helm upgrade %s: %w", release, err)
	}
	h.Progress("release %s/%s upgraded on %s in %s", namespace, release, cp.Name, process.Since(start))
	return nil
}

// config is Helm's configuration for releases in namespace on a control
// plane (release records in Secrets, as helm's default), with the local
// registry's client.
func (h Helm) config(cp *controlplane.ControlPlane, namespace string) (*action.Configuration, error) {
	cfg := &action.Configuration{}
	getter := kube.GetConfig(cp.KubeconfigPath, "", namespace)
	if err := cfg.Init(getter, namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	if h.Registry != nil {
		cfg.RegistryClient = h.Registry.ChartClient()
	}
	return cfg, nil
}
