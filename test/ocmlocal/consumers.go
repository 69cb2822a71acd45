//go:build linux

package ocmlocal

import (
	"context"
	"errors"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/argocdcheck"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/docsconsumer"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kueue"
)

// kueue installs and upgrades Kueue on the hub and the clusters that run
// now.
func (e *Env) kueueSetup() *kueue.Kueue {
	k := &kueue.Kueue{Hub: e.Hub, KubeletOf: e.kubeletOf, Helm: e.helm(), Progress: e.progressf}
	if e.Registry != nil {
		k.BundleRepository = e.Registry.BundleRepository
	}
	for _, c := range e.Clusters {
		k.Clusters = append(k.Clusters, c.ControlPlane)
	}
	return k
}

// startKueue installs Kueue on every managed cluster and on the hub,
// configured as the docs' MultiKueue recipe says (see package kueue), and
// waits until each manager leads.
func (e *Env) startKueue(ctx context.Context) error {
	if e.Registry == nil {
		return errors.New("the harness's Kueue needs Options.Registry: its pod copies cp-creds from the bundle's image, as the docs' recipe says")
	}
	if e.opts.ClusterProxy {
		// The profiles' open-cluster-management entry names the user
		// server on the host, or, written by cluster-proxy's own writer,
		// its Service.
		e.ReachUserServer(kueue.Namespace, kueue.Deployment)
	}
	return e.kueueSetup().Start(ctx, e.bins.Kueue)
}

// UpgradeKueue upgrades Kueue's chart on every managed cluster and on the
// hub to the release of bin/ocm/kueue-upgrade (Kueue's chart holds its
// CRDs as templates, so the upgrade moves them too), the hub's with the
// recipe's configuration for that release (kueue-manager-config-v0.19.yaml)
// as the chart's managerConfig, as the recipe says for Helm, and its patch
// put back; and waits until each manager of the new release leads. It
// returns the release.
func (e *Env) UpgradeKueue(ctx context.Context) (string, error) {
	return e.kueueSetup().Upgrade(ctx, e.bins.KueueUpgrade)
}

// startArgoCD prepares the hub for the bundle's Argo CD integration as a
// platform engineer who runs Argo CD would: Argo CD's namespace (the
// chart's Role goes there), and the cp-creds Argo CD's pods would copy
// from the bundle's image (the image's, with Options.Registry). Argo CD
// itself does not run as a process here: its code runs in
// bin/argocd-check, as Argo CD's service account (see package
// argocdcheck).
func (e *Env) startArgoCD(ctx context.Context) error {
	if err := argocdcheck.CreateNamespace(ctx, e.Hub); err != nil {
		return err
	}
	var err error
	if e.ArgoCDPlugin, err = e.imagePlugin(); err != nil {
		return err
	}
	e.progressf("Argo CD's namespace %s ready, cp-creds at %s", argocdcheck.Namespace, e.ArgoCDPlugin)
	return nil
}

// PrepareArgoCD does what docs/consumers.md ("Argo CD") asks of a platform
// engineer, with its files, but binding a set into argocd: the argocd
// ManagedServiceAccount in each cluster's namespace and its RBAC on each
// cluster; and stands in for Argo CD's install: its argocd-cm and its
// controllers' service account with what they read in argocd. It returns
// Argo CD's code, ready to run as that service account.
func (e *Env) PrepareArgoCD(ctx context.Context) (*argocdcheck.ArgoCD, error) {
	var clusters []*ControlPlane
	for _, c := range e.Clusters {
		clusters = append(clusters, c.ControlPlane)
	}
	return argocdcheck.Prepare(ctx, e.Hub, clusters, e.WorkDir)
}

// imagePlugin is the cp-creds a consumer runs: with Options.Registry the
// bundle image's /cp-creds, as a consumer's pod mounts it from the image
// (Argo CD's own programs run here from its code, not as pods, and exec the
// plugin from the unpacked bundle image); else bin/cp-creds.
func (e *Env) imagePlugin() (string, error) {
	if e.Registry == nil {
		return filepath.Join(RepoRoot(), "bin", "cp-creds"), nil
	}
	img, err := e.pulled.Get(e.Registry.BundleReference(), corev1.PullIfNotPresent)
	if err != nil {
		return "", err
	}
	return filepath.Join(img.Rootfs, "cp-creds"), nil
}

// StartDocsConsumer runs on the hub, in namespace, a consumer's pod set up
// as the chart's README ("Consumers") says (see package docsconsumer): an
// initContainer from the bundle's image copies cp-creds into an emptyDir,
// and the consumer's container, kubectl-clusterprofile doctor --connect,
// uses that copy as its exec plugin; it reports again whenever the kubelet
// restarts it (DocsConsumerReport reads the latest report). The pod's
// service account may read the profiles and token copies of namespace and
// nothing else. It needs Options.Registry and ClusterProxy.
func (e *Env) StartDocsConsumer(ctx context.Context, namespace, name, managedServiceAccount string) error {
	if e.Registry == nil || e.Proxy == nil {
		return errors.New("the docs' consumer needs Options.Registry and Options.ClusterProxy")
	}
	c, err := e.hubClient()
	if err != nil {
		return err
	}
	e.ReachUserServer(namespace, name)
	return docsconsumer.Start(ctx, c, namespace, name, managedServiceAccount, e.Registry.BundleReference())
}

// StopDocsConsumer deletes what StartDocsConsumer created.
func (e *Env) StopDocsConsumer(ctx context.Context, namespace, name string) error {
	c, err := e.hubClient()
	if err != nil {
		return err
	}
	return docsconsumer.Stop(ctx, c, namespace, name)
}

// DocsConsumerReport is the last report the docs' consumer printed.
func (e *Env) DocsConsumerReport(namespace, name string) (doctor.Report, error) {
	containers, err := e.PodContainers(e.Hub, namespace, name)
	if err != nil {
		return doctor.Report{}, err
	}
	return docsconsumer.Report(containers)
}
