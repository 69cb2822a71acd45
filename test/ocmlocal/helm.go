//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/kube"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// InstallChart installs a chart on the hub as `helm install
// --create-namespace --take-ownership` does, with Helm's Go library and the
// hub admin identity. Take-ownership: the harness installed the hub CRDs
// (among them the ClusterProfile CRD) before any chart. The chart's
// Deployments are then run by the hub kubelet like any other.
func (e *Env) InstallChart(ctx context.Context, c *chart.Chart, release, namespace string, values map[string]any) error {
	return e.installChartOn(ctx, e.Hub, c, release, namespace, values)
}

// installChartOn is InstallChart on a control plane (the hub or a managed
// cluster).
func (e *Env) installChartOn(ctx context.Context, cp *ControlPlane, c *chart.Chart, release, namespace string, values map[string]any) error {
	start := time.Now()
	cfg, err := e.helmConfig(cp, namespace)
	if err != nil {
		return err
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = release, namespace
	install.CreateNamespace, install.TakeOwnership = true, true
	if _, err := install.RunWithContext(ctx, c, values); err != nil {
		return fmt.Errorf("helm install %s: %w", release, err)
	}
	e.progressf("chart %s installed on %s as release %s/%s in %s", c.Name(), cp.Name, namespace, release, process.Since(start))
	return nil
}

// WaitDeploymentAvailable waits until a Deployment on the hub has an
// available replica, i.e. the hub kubelet runs its pod.
func (e *Env) WaitDeploymentAvailable(ctx context.Context, namespace, name string) error {
	return kubelet.WaitDeploymentAvailable(ctx, e.Hub, namespace, name)
}

// UninstallChart uninstalls a release as `helm uninstall` does, waiting
// for its objects to be deleted.
func (e *Env) UninstallChart(ctx context.Context, release, namespace string) error {
	start := time.Now()
	cfg, err := e.helmConfig(e.Hub, namespace)
	if err != nil {
		return err
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.Wait, uninstall.Timeout = true, 2*time.Minute
	if _, err := uninstall.Run(release); err != nil {
		return fmt.Errorf("helm uninstall %s: %w", release, err)
	}
	e.progressf("release %s/%s uninstalled in %s", namespace, release, process.Since(start))
	return nil
}

// UpgradeChart upgrades a release with values, as `helm upgrade` does.
func (e *Env) UpgradeChart(ctx context.Context, c *chart.Chart, release, namespace string, values map[string]any) error {
	return e.upgradeChartOn(ctx, e.Hub, c, release, namespace, values)
}

// upgradeChartOn is UpgradeChart on a control plane.
func (e *Env) upgradeChartOn(ctx context.Context, cp *ControlPlane, c *chart.Chart, release, namespace string, values map[string]any) error {
	start := time.Now()
	cfg, err := e.helmConfig(cp, namespace)
	if err != nil {
		return err
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = namespace
	if _, err := upgrade.RunWithContext(ctx, release, c, values); err != nil {
		return fmt.Errorf("helm upgrade %s: %w", release, err)
	}
	e.progressf("release %s/%s upgraded on %s in %s", namespace, release, cp.Name, process.Since(start))
	return nil
}

// helmConfig is Helm's configuration for releases in namespace on a
// control plane (release records in Secrets, as helm's default), with the
// local registry's client.
func (e *Env) helmConfig(cp *ControlPlane, namespace string) (*action.Configuration, error) {
	cfg := &action.Configuration{}
	getter := kube.GetConfig(cp.KubeconfigPath, "", namespace)
	if err := cfg.Init(getter, namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	if e.Registry != nil {
		cfg.RegistryClient = e.Registry.ChartClient()
	}
	return cfg, nil
}
