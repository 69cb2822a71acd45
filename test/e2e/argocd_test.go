//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

const (
	// argoCDNS is Argo CD's namespace; the default set is bound there.
	argoCDNS = ocmlocal.ArgoCDNamespace
	// argoCDIdentity is the service account Argo CD's controllers run as.
	argoCDIdentity = "argocd-application-controller"
	// argoCDExamples are the docs' Argo CD files, which this test applies.
	argoCDExamples = "docs/examples/argocd"
)

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
	requireEnv(t)
	check := argoCDCheck(t)
	ctx, g := context.Background(), NewWithT(t)
	g.SetDefaultEventuallyTimeout(timeout)
	g.SetDefaultEventuallyPollingInterval(interval)
	setUpArgoCD(ctx, t, g)
	kubeconfig := argoCDKubeconfig(ctx, t)
	a := &argoCD{t: t, g: g, check: check, kubeconfig: kubeconfig}

	g.Eventually(func() map[string]string {
		return a.clusters().users()
	}).Should(Equal(map[string]string{"cluster1": argoCDUser, "cluster2": argoCDUser}), "Argo CD reaches every cluster as argocd")
	a.syncAndPrune(ctx)
	a.generators(ctx)
	a.refusesForgedServer(ctx)
	rotated := rotateArgoCDToken(ctx, g, "cluster1")
	g.Eventually(func() string {
		return a.clusters().named("cluster1").CredentialID
	}).Should(Equal("JTI="+tokenID(g, rotated)), "Argo CD's next connection to cluster1 uses the rotated token")

	g.Expect(hub.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: defaultSet}})).To(Succeed())
	g.Eventually(func() map[string]string {
		return a.clusters().users()
	}).Should(BeEmpty(), "the bundle's clusters leave Argo CD with the binding")
}

// argoCDUser is who the argocd ManagedServiceAccount is on each cluster.
const argoCDUser = "system:serviceaccount:open-cluster-management-agent-addon:argocd"

// argoCD runs Argo CD's code (bin/argocd-check) as Argo CD's service account.
type argoCD struct {
	t                 *testing.T
	g                 Gomega
	check, kubeconfig string
	// stderr is the last run's, with the exec plugins' own.
	stderr string
}

func (a *argoCD) run(out any, args ...string) {
	a.stderr = runArgoCD(a.t, a.check, a.kubeconfig, out, args...)
}

// clusters are Argo CD's clusters, each with who its API server says Argo
// CD is, through the cluster's REST config.
func (a *argoCD) clusters() argoCDClusters {
	var out argoCDClusters
	a.run(&out, "clusters")
	return out
}

// syncAndPrune syncs an Application's manifests to cluster1 with
// gitops-engine, then prunes them; cluster1's admin sees both.
func (a *argoCD) syncAndPrune(ctx context.Context) {
	g := a.g
	manifests := filepath.Join(a.t.TempDir(), "app")
	g.Expect(os.MkdirAll(manifests, 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(manifests, "app.yaml"), []byte(argoCDApp), 0o644)).To(Succeed())
	var synced argoCDSync
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

// refusesForgedServer: a cluster Secret forged to send cluster1's token to
// another server gets nothing from cp-creds, Argo CD reports its connection
// error, and the other clusters are untouched. client-go leaves an exec
// plugin's stderr on the caller's and names only its exit code in the
// error.
func (a *argoCD) refusesForgedServer(ctx context.Context) {
	g := a.g
	forged := forgedClusterSecret(ctx, g)
	var clusters argoCDClusters
	g.Eventually(func() string {
		clusters = a.clusters()
		return clusters.named(forged).Error
	}).Should(ContainSubstring("exit code 1"), "Argo CD reports the forged cluster's connection error: %+v", clusters)
	g.Expect(a.stderr).To(ContainSubstring(fmt.Sprintf("refusing to send the token of cluster %q to %s", "cluster1", env.Clusters[1].URL)),
		"cp-creds refuses a server the hub did not publish")
	g.Expect(clusters.users()).To(Equal(map[string]string{"cluster1": argoCDUser, "cluster2": argoCDUser}), "the forged Secret changes no other cluster")
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

// argoCDCheck is bin/argocd-check (make argocd). Without it the test skips,
// or fails in CI, which builds it.
func argoCDCheck(t *testing.T) string {
	t.Helper()
	path := filepath.Join(ocmlocal.RepoRoot(), "bin", "argocd-check")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bin/argocd-check not built (make argocd): %v", err)
		}
		t.Skipf("bin/argocd-check not built (make argocd: it needs the Go 1.27.3 toolchain from the module proxy): %v", err)
	}
	return path
}

// setUpArgoCD does what docs/consumers.md ("Argo CD") asks of a platform
// engineer, with its files: Argo CD's argocd-cm (what Argo CD's install
// creates), the argocd ManagedServiceAccount of each cluster and its RBAC
// there, the default set bound into argocd, a cluster labelled for the
// docs' Placement and the Placement; then it waits for the bundle's
// cluster Secrets and token copies.
func setUpArgoCD(ctx context.Context, t *testing.T, g Gomega) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: "argocd-cm",
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data: map[string]string{"cluster.inClusterEnabled": "false"}}
	g.Expect(client.IgnoreAlreadyExists(hub.Create(ctx, cm))).To(Succeed())
	for _, c := range env.Clusters {
		for _, u := range examples(t, "managedserviceaccount.yaml") {
			u.SetNamespace(c.Name)
			g.Expect(client.IgnoreAlreadyExists(hub.Create(ctx, u))).To(Succeed())
		}
		for _, u := range examples(t, "managed-cluster-rbac.yaml") {
			g.Expect(client.IgnoreAlreadyExists(managedClient(t, c.Name).Create(ctx, u))).To(Succeed())
		}
	}
	g.Expect(client.IgnoreAlreadyExists(bindSet(ctx, argoCDNS, defaultSet))).To(Succeed())
	mc := &clusterv1.ManagedCluster{}
	g.Expect(hub.Get(ctx, key("", "cluster1"), mc)).To(Succeed())
	mc.Labels["gitops"] = "enabled"
	g.Expect(hub.Update(ctx, mc)).To(Succeed())
	for _, u := range examples(t, "placement.yaml") {
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
}

// examples reads one of the docs' Argo CD files.
func examples(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ocmlocal.RepoRoot(), argoCDExamples, name))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := chartrender.Objects(string(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return objects
}

// applicationSetDecisions reads the cluster-decision-resource generator of
// the docs' ApplicationSet: its ConfigMap and label selector.
func applicationSetDecisions(g Gomega) (string, string) {
	data, err := os.ReadFile(filepath.Join(ocmlocal.RepoRoot(), argoCDExamples, "applicationset.yaml"))
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

// argoCDKubeconfig writes a kubeconfig of Argo CD's service account in
// argocd, with what its controllers read there and nothing else: Secrets
// (cluster Secrets and the token copies), ConfigMaps (its settings, the
// generator's) and PlacementDecisions.
func argoCDKubeconfig(ctx context.Context, t *testing.T) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.HubConfig())
	if err != nil {
		t.Fatal(err)
	}
	read := []string{"get", "list", "watch"}
	objects := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: argoCDIdentity}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: argoCDIdentity}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: read},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"placementdecisions"}, Verbs: read}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNS, Name: argoCDIdentity},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: argoCDIdentity},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: argoCDNS, Name: argoCDIdentity}}},
	}
	for _, o := range objects {
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, o)); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(argoCDNS).CreateToken(ctx, argoCDIdentity, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: env.HubConfig().Host, CertificateAuthorityData: env.HubConfig().CAData}
	cfg.AuthInfos[argoCDIdentity] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["argocd"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: argoCDIdentity, Namespace: argoCDNS}
	cfg.CurrentContext = "argocd"
	path := filepath.Join(t.TempDir(), "argocd.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runArgoCD runs argocd-check as Argo CD's pods would run its code: with its
// identity's kubeconfig (KUBECONFIG, which cp-creds reads too) and its
// namespace (NAMESPACE, where cp-creds finds the copies). Its stderr, which
// holds the exec plugins' own.
func runArgoCD(t *testing.T, check, kubeconfig string, out any, args ...string) string {
	t.Helper()
	cmd := exec.Command(check, append(args, "--kubeconfig", kubeconfig, "--namespace", argoCDNS)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NAMESPACE="+argoCDNS)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("argocd-check %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("argocd-check %s printed %q: %v", strings.Join(args, " "), stdout.String(), err)
	}
	return stderr.String()
}

type argoCDClusters struct {
	Clusters []argoCDCluster `json:"clusters"`
}

type argoCDCluster struct {
	Name   string            `json:"name"`
	Server string            `json:"server"`
	Labels map[string]string `json:"labels"`
	User   string            `json:"user"`
	// CredentialID is the API server's id of the token it saw.
	CredentialID string `json:"credentialID"`
	Error        string `json:"error"`
}

// users maps each cluster the bundle published to who it says Argo CD is.
func (c argoCDClusters) users() map[string]string {
	out := map[string]string{}
	for _, cl := range c.Clusters {
		if cl.Labels[argocd.LabelCreatedBy] != "" {
			out[cl.Name] = cl.User
		}
	}
	return out
}

// named is the cluster of that name, or none.
func (c argoCDClusters) named(name string) argoCDCluster {
	for _, cl := range c.Clusters {
		if cl.Name == name {
			return cl
		}
	}
	return argoCDCluster{}
}

type argoCDSync struct {
	CacheSynced bool   `json:"cacheSynced"`
	Phase       string `json:"phase"`
	Message     string `json:"message"`
	Error       string `json:"error"`
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
