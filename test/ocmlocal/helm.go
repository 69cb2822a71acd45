//go:build linux

package ocmlocal

import (
	"context"

	"helm.sh/helm/v3/pkg/chart"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/charts"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
)

// helm runs Helm's actions with the environment's registry.
func (e *Env) helm() charts.Helm { return charts.Helm{Registry: e.Registry, Progress: e.progressf} }

// InstallChart installs a chart on the hub as `helm install
// --create-namespace --take-ownership` does, with Helm's Go library and the
// hub admin identity. Take-ownership: the harness installed the hub CRDs
// (among them the ClusterProfile CRD) before any chart. The chart's
// Deployments are then run by the hub kubelet like any other.
func (e *Env) InstallChart(ctx context.Context, c *chart.Chart, release, namespace string, values map[string]any) error {
	return e.helm().Install(ctx, e.Hub, c, release, namespace, values)
}

// WaitDeploymentAvailable waits until a Deployment on the hub has an
// available replica, i.e. the hub kubelet runs its pod.
func (e *Env) WaitDeploymentAvailable(ctx context.Context, namespace, name string) error {
	return kubelet.WaitDeploymentAvailable(ctx, e.Hub, namespace, name)
}

// UninstallChart uninstalls a release on the hub as `helm uninstall` does,
// waiting for its objects to be deleted.
func (e *Env) UninstallChart(_ context.Context, release, namespace string) error {
	return e.helm().Uninstall(e.Hub, release, namespace)
}

// UpgradeChart upgrades a release on the hub with values, as `helm
// upgrade` does.
func (e *Env) UpgradeChart(ctx context.Context, c *chart.Chart, release, namespace string, values map[string]any) error {
	return e.helm().Upgrade(ctx, e.Hub, c, release, namespace, values)
}
