//go:build linux

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/argocdcheck"
)

// argoCDNS is Argo CD's namespace; the default set is bound there.
const argoCDNS = argocdcheck.Namespace

// TestArgoCDDeploysToEveryClusterThroughTheProfiles sets Argo CD up as
// docs/consumers.md says (its files under docs/examples/argocd) and runs
// Argo CD v3.6.1's own code (bin/argocd-check) as Argo CD's service account:
// util/db lists the cluster Secrets the bundle keeps for the profiles in
// argocd, Cluster.RESTConfig() runs the image's cp-creds, which reaches each
// cluster through cluster-proxy's user server as the argocd
// ManagedServiceAccount; gitops-engine's cache syncs each cluster and its
// sync applies an Application's manifests to cluster1 and prunes them;
// ApplicationSet's cluster generator selects clusters by their profiles'
// labels, and its cluster-decision-resource generator, over the
// PlacementDecision OCM's placement controller writes for the docs'
// Placement, yields the placed clusters. A Secret someone forged for a
// server the hub does not publish gets no token from cp-creds, a rotated
// token is used on the next connection, and Argo CD's clusters go with the
// set's binding.
func TestArgoCDDeploysToEveryClusterThroughTheProfiles(t *testing.T) {
	ctx, g := begin(t)
	a := &argoCD{t: t, g: g, ArgoCD: setUpArgoCD(ctx, t, g)}

	g.Eventually(func() map[string]string {
		return a.clusters().Reached()
	}).Should(Equal(everyCluster), "Argo CD reaches every cluster as argocd")
	a.syncAndPrune(ctx)
	a.generators(ctx)
	a.refusesForgedServer(ctx)
	rotated := rotateArgoCDToken(ctx, g, "cluster1")
	g.Eventually(func() string {
		return clusterNamed(a.clusters(), "cluster1").CredentialID
	}).Should(Equal("JTI="+tokenID(g, rotated)), "Argo CD's next connection to cluster1 uses the rotated token")

	g.Expect(hub.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: defaultSet}})).To(Succeed())
	g.Eventually(func() map[string]string {
		return a.clusters().Reached()
	}).Should(BeEmpty(), "the bundle's clusters leave Argo CD with the binding")
}

// everyCluster is Argo CD reaching each cluster as the argocd
// ManagedServiceAccount.
var everyCluster = map[string]string{"cluster1": argoCDUser, "cluster2": argoCDUser}

// argoCD runs Argo CD's code (bin/argocd-check) as Argo CD's service
// account, failing the test if it cannot.
type argoCD struct {
	*argocdcheck.ArgoCD
	t *testing.T
	g Gomega
	// stderr is the last run's, with the exec plugins' own.
	stderr string
}

func (a *argoCD) run(out any, args ...string) {
	a.t.Helper()
	var err error
	a.stderr, err = a.Run(context.Background(), out, args...)
	if err != nil {
		a.t.Fatal(err)
	}
}

// clusters are Argo CD's clusters, each with who its API server says Argo
// CD is, through the cluster's REST config.
func (a *argoCD) clusters() argocdcheck.Clusters {
	var out argocdcheck.Clusters
	a.run(&out, "clusters")
	return out
}

// syncAndPrune syncs an Application's manifests to cluster1 with
// gitops-engine, then prunes them; cluster1's admin sees both. Then the
// cache of cluster2 syncs too.
func (a *argoCD) syncAndPrune(ctx context.Context) {
	g := a.g
	manifests := filepath.Join(a.t.TempDir(), "app")
	g.Expect(os.MkdirAll(manifests, 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(manifests, "app.yaml"), []byte(argoCDApp), 0o644)).To(Succeed())
	var synced argocdcheck.Sync
	a.run(&synced, "sync", "--cluster", "cluster1", "--app", "e2e-argocd", "--manifests", manifests)
	g.Expect(synced.CacheSynced).To(BeTrue(), "gitops-engine's cache of cluster1: %+v", synced)
	g.Expect(synced.Phase).To(Equal("Succeeded"), "%+v", synced)
	managed := managedClient(a.t, "cluster1")
	g.Eventually(func() error {
		return managed.Get(ctx, key("e2e-argocd", "greeting"), &corev1.ConfigMap{})
	}).Should(Succeed(), "the Application's ConfigMap on cluster1")
	g.Expect(os.Remove(filepath.Join(manifests, "app.yaml"))).To(Succeed())
	a.run(&synced, "sync", "--cluster", "cluster1", "--app", "e2e-argocd", "--manifests", manifests, "--prune")
	g.Expect(synced.Phase).To(Equal("Succeeded"), "%+v", synced)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(managed.Get(ctx, key("", "e2e-argocd"), &corev1.Namespace{}))
	}).Should(BeTrue(), "the Application's namespace pruned from cluster1")
	// Nothing to apply on cluster2: gitops-engine's cache of it syncs.
	a.run(&synced, "sync", "--cluster", "cluster2", "--app", "e2e-argocd", "--manifests", manifests)
	g.Expect(synced.CacheSynced).To(BeTrue(), "gitops-engine's cache of cluster2: %+v", synced)
	g.Expect(synced.Phase).To(Equal("Succeeded"), "%+v", synced)
}

// generators: ApplicationSet's cluster generator selects by a label just
// put on a profile, and its cluster-decision-resource generator, as the
// docs' ApplicationSet configures it, yields what OCM's placement
// controller decided for the docs' Placement, each decision resolving to
// the bundle's cluster Secret.
func (a *argoCD) generators(ctx context.Context) {
	g := a.g
	labelProfile(ctx, g, "cluster2", "team", "payments")
	var params argoCDParams
	g.Eventually(func() []string {
		a.run(&params, "appset-clusters", "--selector", "team=payments")
		return params.names("name")
	}).Should(Equal([]string{"cluster2"}), "ApplicationSet's cluster generator by a profile's label")

	configMap, selector := applicationSetDecisions(g)
	g.Eventually(func() []string {
		a.run(&params, "appset-decisions", "--configmap", configMap, "--label-selector", selector)
		return params.names("clusterName")
	}).Should(Equal([]string{"cluster1"}), "ApplicationSet's cluster-decision-resource generator over OCM's PlacementDecision")
	g.Expect(params.names("name")).To(Equal([]string{"cluster1"}), "each decision resolves to the bundle's cluster Secret")
}

// refusesForgedServer: a profile forged in argocd gets no cluster Secret,
// and a cluster Secret forged to send cluster1's token to another server
// gets nothing from cp-creds: Argo CD reports its connection error, and the
// other clusters are untouched. client-go leaves an exec
// plugin's stderr on the caller's and names only its exit code in the
// error.
func (a *argoCD) refusesForgedServer(ctx context.Context) {
	g := a.g
	forgedProfile := forgeProfile(ctx, g, "cluster1", "cluster9")
	forged := forgedClusterSecret(ctx, g)
	var clusters argocdcheck.Clusters
	g.Eventually(func() string {
		clusters = a.clusters()
		return clusterNamed(clusters, forged).Error
	}).Should(ContainSubstring("exit code 1"), "Argo CD reports the forged cluster's connection error: %+v", clusters)
	g.Expect(a.stderr).To(ContainSubstring(fmt.Sprintf("refusing to send the token of cluster %q to %s", "cluster1", env.Clusters[1].URL)),
		"cp-creds refuses a server the hub did not publish")
	g.Expect(clusters.Reached()).To(Equal(everyCluster), "the forged Secret changes no other cluster")
	g.Expect(clusterNamed(clusters, forgedProfile)).To(Equal(argocdcheck.Cluster{}), "a forged profile is no Argo CD cluster")
	g.Expect(apierrors.IsNotFound(hub.Get(ctx, key(argoCDNS, argocd.SecretName(forgedProfile)), &corev1.Secret{}))).
		To(BeTrue(), "no cluster Secret for a forged profile")
	g.Expect(hub.Delete(ctx, &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: forgedProfile}})).To(Succeed())
	g.Expect(hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: argocd.SecretName(forged)}})).To(Succeed())
}

// forgeProfile is what someone who may write profiles in argocd can make:
// a copy of a published profile, labels, spec and entries, under another
// cluster's name, which the hub publishes nowhere. A copy that names the
// bundle's cluster manager is the mirror's to judge, and the mirror deletes
// it at once (a profile of its own it does not want); one that names
// another manager stays, and must still get nothing. Its name.
func forgeProfile(ctx context.Context, g Gomega, from, name string) string {
	published := &cpv1alpha1.ClusterProfile{}
	g.Expect(hub.Get(ctx, key(argoCDNS, from), published)).To(Succeed())
	ours := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: name, Labels: published.Labels},
		Spec: published.Spec}
	g.Expect(hub.Create(ctx, ours)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(hub.Get(ctx, key(argoCDNS, name), ours)) }).
		Should(BeTrue(), "the mirror deletes a forged profile in its cluster manager's name")

	forged := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: name, Labels: published.Labels},
		Spec: published.Spec}
	forged.Spec.ClusterManager.Name = "forger"
	g.Expect(hub.Create(ctx, forged)).To(Succeed())
	forged.Status = published.Status
	g.Expect(hub.Status().Update(ctx, forged)).To(Succeed())
	return name
}

// tokenID is a service account token's jti claim, which the API server
// names as the credential it saw.
func tokenID(g Gomega, token string) string {
	parts := strings.Split(token, ".")
	g.Expect(parts).To(HaveLen(3), "a JWT")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	g.Expect(err).NotTo(HaveOccurred())
	var claims struct {
		JTI string `json:"jti"`
	}
	g.Expect(json.Unmarshal(payload, &claims)).To(Succeed())
	g.Expect(claims.JTI).NotTo(BeEmpty(), "the token's jti")
	return claims.JTI
}

// argoCDApp is the Application the sync deploys: a namespace and a
// ConfigMap in it.
const argoCDApp = `apiVersion: v1
kind: Namespace
metadata:
  name: e2e-argocd
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: e2e-argocd
data:
  hello: from Argo CD through a ClusterProfile
`

// setUpArgoCD does what docs/consumers.md ("Argo CD") asks of a platform
// engineer, with its files (ocmlocal's PrepareArgoCD, which also stands in
// for Argo CD's install): the argocd ManagedServiceAccount of each cluster
// and its RBAC there, the default set bound into argocd, a cluster
// labelled for the docs' Placement and the Placement; then it waits for
// the bundle's cluster Secrets and token copies. Without bin/argocd-check
// the test skips, or fails in CI, which builds it.
func setUpArgoCD(ctx context.Context, t *testing.T, g Gomega) *argocdcheck.ArgoCD {
	t.Helper()
	argo, err := env.PrepareArgoCD(ctx)
	if errors.Is(err, argocdcheck.ErrNotBuilt) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(client.IgnoreAlreadyExists(bindSet(ctx, argoCDNS, defaultSet))).To(Succeed())
	mc := &clusterv1.ManagedCluster{}
	g.Expect(hub.Get(ctx, key("", "cluster1"), mc)).To(Succeed())
	mc.Labels["gitops"] = "enabled"
	g.Expect(hub.Update(ctx, mc)).To(Succeed())
	placement, err := argocdcheck.Example("placement.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	for _, u := range placement {
		g.Expect(client.IgnoreAlreadyExists(hub.Create(ctx, u))).To(Succeed())
	}
	for _, c := range env.Clusters {
		g.Eventually(func() error {
			return hub.Get(ctx, key(argoCDNS, argocd.SecretName(c.Name)), &corev1.Secret{})
		}).Should(Succeed(), "the bundle's cluster Secret of %s", c.Name)
		g.Eventually(func() error {
			return hub.Get(ctx, key(argoCDNS, c.Name+"-argocd"), &corev1.Secret{})
		}).Should(Succeed(), "the argocd token of %s, copied", c.Name)
	}
	return argo
}

// applicationSetDecisions reads the cluster-decision-resource generator of
// the docs' ApplicationSet: its ConfigMap and label selector.
func applicationSetDecisions(g Gomega) (string, string) {
	data, err := os.ReadFile(filepath.Join(ocmlocal.RepoRoot(), "docs", "examples", "argocd", "applicationset.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var appset struct {
		Spec struct {
			Generators []struct {
				ClusterDecisionResource struct {
					ConfigMapRef  string `json:"configMapRef"`
					LabelSelector struct {
						MatchLabels map[string]string `json:"matchLabels"`
					} `json:"labelSelector"`
				} `json:"clusterDecisionResource"`
			} `json:"generators"`
		} `json:"spec"`
	}
	g.Expect(yaml.Unmarshal(data, &appset)).To(Succeed())
	g.Expect(appset.Spec.Generators).To(HaveLen(1))
	generator := appset.Spec.Generators[0].ClusterDecisionResource
	var selector []string
	for k, v := range generator.LabelSelector.MatchLabels {
		selector = append(selector, k+"="+v)
	}
	return generator.ConfigMapRef, strings.Join(selector, ",")
}

type argoCDParams struct {
	Params []map[string]any `json:"params"`
}

// names are the values of key in the generator's params, sorted.
func (p argoCDParams) names(key string) []string {
	out := []string{}
	for _, param := range p.Params {
		out = append(out, fmt.Sprint(param[key]))
	}
	slices.Sort(out)
	return out
}

// managedClient is an admin client of a managed cluster.
func managedClient(t *testing.T, cluster string) client.Client {
	t.Helper()
	c, err := client.New(env.Cluster(cluster).Config, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// labelProfile labels a cluster's profile in argocd, as someone who may
// edit profiles there would; the mirror keeps the label.
func labelProfile(ctx context.Context, g Gomega, cluster, label, value string) {
	p := &cpv1alpha1.ClusterProfile{}
	g.Expect(hub.Get(ctx, key(argoCDNS, cluster), p)).To(Succeed())
	p.Labels[label] = value
	g.Expect(hub.Update(ctx, p)).To(Succeed())
}

// forgedClusterSecret is a cluster Secret someone who may write Secrets in
// argocd made by hand: cluster1's exec config, with cluster2's API server
// behind it (a server the hub publishes for no profile). Its name.
func forgedClusterSecret(ctx context.Context, g Gomega) string {
	ours := &corev1.Secret{}
	g.Expect(hub.Get(ctx, key(argoCDNS, argocd.SecretName("cluster1")), ours)).To(Succeed())
	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: "cluster-forged",
		Labels: map[string]string{argocd.LabelSecretType: argocd.SecretTypeCluster}},
		Data: map[string][]byte{"name": []byte("forged"), "server": []byte(env.Clusters[1].URL), "config": ours.Data["config"]}}
	g.Expect(client.IgnoreAlreadyExists(hub.Create(ctx, forged))).To(Succeed())
	return "forged"
}

// rotateArgoCDToken has the managed-serviceaccount agent issue a new token
// (its Secret deleted on the hub), and waits for the copy in argocd to
// hold it.
func rotateArgoCDToken(ctx context.Context, g Gomega, cluster string) string {
	source, copyKey := key(cluster, "argocd"), key(argoCDNS, cluster+"-argocd")
	first := syncedToken(ctx, g, source, copyKey)
	g.Expect(hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "argocd"}})).To(Succeed())
	var rotated string
	g.Eventually(func(g Gomega) {
		rotated = syncedToken(ctx, g, source, copyKey)
		g.Expect(rotated).NotTo(Equal(first))
	}, 2*time.Minute).Should(Succeed(), "the rotated token, copied")
	return rotated
}
