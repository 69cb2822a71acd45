//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/argocdcheck"
)

// argoCDApp is what the demo's Application deploys: a namespace and a
// ConfigMap in it.
const argoCDApp = `apiVersion: v1
kind: Namespace
metadata:
  name: demo-argocd
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: demo-argocd
data:
  hello: from Argo CD through a ClusterProfile
`

// argoCD runs Argo CD v3.6.1's own code (bin/argocd-check) as Argo CD's
// service account in argocd, set up with the docs' files: the clusters it
// reads from the bundle's cluster Secrets, reached through cp-creds as the
// argocd ManagedServiceAccount, and one sync of an Application to
// cluster1 with gitops-engine.
func (d *demo) argoCD(ctx context.Context) error {
	step("Argo CD's own code (v3.6.1) as Argo CD's service account in %s: its clusters, and one sync", argocdNS)
	argo, err := d.env.PrepareArgoCD(ctx)
	if errors.Is(err, argocdcheck.ErrNotBuilt) {
		fmt.Printf("    skipped: %v\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	var clusters argocdcheck.Clusters
	err = d.waitFor(ctx, "Argo CD reached every cluster through its cluster Secret", func(ctx context.Context) (bool, error) {
		if _, err := argo.Run(ctx, &clusters, "clusters"); err != nil {
			return false, err
		}
		return len(clusters.Reached()) == len(d.env.Clusters), nil
	})
	if err != nil {
		return err
	}
	for _, c := range clusters.Clusters {
		fmt.Printf("    %s  %s  as %s\n", c.Name, c.Server, c.User)
	}
	return d.argoCDSync(ctx, argo, "cluster1")
}

// argoCDSync syncs argoCDApp to the cluster and shows what cluster's admin
// then sees.
func (d *demo) argoCDSync(ctx context.Context, argo *argocdcheck.ArgoCD, cluster string) error {
	dir := filepath.Join(d.env.WorkDir, "argocd-app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(argoCDApp), 0o644); err != nil {
		return err
	}
	var synced argocdcheck.Sync
	if _, err := argo.Run(ctx, &synced, "sync", "--cluster", cluster, "--app", "demo-argocd", "--manifests", dir); err != nil {
		return err
	}
	if synced.Phase != "Succeeded" {
		return fmt.Errorf("the sync to %s: %s %s %s", cluster, synced.Phase, synced.Message, synced.Error)
	}
	results := make([]string, 0, len(synced.Results))
	for _, r := range synced.Results {
		name := r.Namespace + "/" + r.Name
		if r.Kind == "Namespace" {
			name = r.Name
		}
		results = append(results, fmt.Sprintf("%s %s %s", r.Kind, name, r.Status))
	}
	sort.Strings(results)
	fmt.Printf("    sync to %s (gitops-engine's cache of %d resources): %s, %v\n", cluster, synced.Resources, synced.Phase, results)
	admin, err := client.New(d.env.Cluster(cluster).Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: "demo-argocd", Name: "greeting"}, cm); err != nil {
		return err
	}
	fmt.Printf("    on %s, as its admin: ConfigMap demo-argocd/greeting says %q\n", cluster, cm.Data["hello"])
	return nil
}
