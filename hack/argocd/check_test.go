package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	argoNS = "argocd"
	appKey = "app.kubernetes.io/instance"
)

var placementDecisions = schema.GroupVersionResource{
	Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placementdecisions",
}

// fixture is a hub as the bundle leaves it for Argo CD: Argo CD's namespace
// and ConfigMap, cluster Secrets whose exec plugin stands in for cp-creds, and
// an identity for the probe with only the Role below. The envtest API server
// is also the "managed cluster" c1 points at.
type fixture struct {
	ctx        context.Context
	admin      kubernetes.Interface
	dyn        dynamic.Interface
	kubeconfig string // the probe's hub identity
	server     string // c1's server URL
	c1User     string // who c1's credentials are
}

func TestArgoCDCheck(t *testing.T) {
	f := startHub(t)
	t.Run("clusters", f.testClusters)
	t.Run("sync", f.testSync)
	t.Run("appset-clusters", f.testAppsetClusters)
	t.Run("appset-decisions", f.testAppsetDecisions)
}

// skipOutsideCI skips for a missing prerequisite, which CI (.ci/run)
// installs: there it fails.
func skipOutsideCI(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// envtestAssets finds kube-apiserver and etcd where `make envtest` puts them.
func envtestAssets(t *testing.T) string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "bin", "envtest"))
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			skipOutsideCI(t, "no %s in %s (run `make envtest` in the repository root): %v", bin, dir, err)
		}
	}
	return dir
}

// placementDecisionCRD is OCM's CRD from the module cache, at the version of
// open-cluster-management.io/api that the bundle's go.mod requires.
func placementDecisionCRD(t *testing.T) string {
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*open-cluster-management\.io/api (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("the bundle's go.mod requires no open-cluster-management.io/api")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "open-cluster-management.io", "api@"+string(m[1]), "cluster", "v1beta1")
	matches, _ := filepath.Glob(filepath.Join(dir, "*placementdecisions.crd.yaml"))
	if len(matches) != 1 {
		skipOutsideCI(t, "no PlacementDecision CRD in %s (run `go mod download` in the repository root)", dir)
	}
	return matches[0]
}

func startHub(t *testing.T) *fixture {
	env := &envtest.Environment{
		BinaryAssetsDirectory: envtestAssets(t),
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{placementDecisionCRD(t)}, ErrorIfPathMissing: true},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	f := &fixture{ctx: ctx, admin: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
	f.server = cfg.Host
	if !strings.Contains(f.server, "://") {
		f.server = "https://" + f.server
	}
	f.server = strings.TrimRight(f.server, "/")
	f.createArgoCDNamespace(t)
	f.kubeconfig = f.probeIdentity(t, cfg)
	token := f.clusterAdminToken(t, "default", "c1-admin")
	f.c1User = "system:serviceaccount:default:c1-admin"
	dir := t.TempDir()
	plugin, tokenFile := writeExecPlugin(t, dir, token)
	f.createClusterSecret(t, "c1", f.server, cfg.CAData, plugin, tokenFile, map[string]string{"env": "test"})
	// c2 points elsewhere, so the plugin refuses it: its error must show
	// in the output without hiding c1's result.
	f.createClusterSecret(t, "c2", "https://127.0.0.1:1", cfg.CAData, plugin, tokenFile, map[string]string{"env": "prod"})
	return f
}

// createArgoCDNamespace creates what an Argo CD install has and the probe
// reads: util/settings only watches ConfigMaps labelled part-of=argocd, and
// argocd-cm must exist for the cluster cache's resource.respectRBAC.
func (f *fixture) createArgoCDNamespace(t *testing.T) {
	f.create(t, func() error {
		_, err := f.admin.CoreV1().Namespaces().Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNS}}, metav1.CreateOptions{})
		return err
	})
	f.create(t, func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "argocd-cm", Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
		}}
		_, err := f.admin.CoreV1().ConfigMaps(argoNS).Create(f.ctx, cm, metav1.CreateOptions{})
		return err
	})
}

// probeIdentity is a ServiceAccount in Argo CD's namespace with only what the
// probe needs there, so that the test proves that Role is enough; it returns
// a kubeconfig for it.
func (f *fixture) probeIdentity(t *testing.T, cfg *rest.Config) string {
	const sa = "argocd-check"
	f.create(t, func() error {
		_, err := f.admin.CoreV1().ServiceAccounts(argoNS).Create(f.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		return err
	})
	f.create(t, func() error {
		_, err := f.admin.RbacV1().Roles(argoNS).Create(f.ctx, probeRole(sa), metav1.CreateOptions{})
		return err
	})
	f.create(t, func() error {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: argoNS}},
		}
		_, err := f.admin.RbacV1().RoleBindings(argoNS).Create(f.ctx, rb, metav1.CreateOptions{})
		return err
	})
	return writeKubeconfig(t, f.server, cfg.CAData, f.token(t, argoNS, sa))
}

// probeRole is the RBAC the probe's hub identity needs in Argo CD's
// namespace: util/settings lists and watches ConfigMaps and Secrets, the
// duck-type generator reads its ConfigMap and lists the decisions.
func probeRole(name string) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{placementDecisions.Group}, Resources: []string{placementDecisions.Resource}, Verbs: []string{"get", "list"}},
		},
	}
}

func writeKubeconfig(t *testing.T, server string, ca []byte, token string) string {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	kc.AuthInfos["probe"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "probe"}
	kc.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterAdminToken is the managed cluster's identity for c1: a
// ServiceAccount bound to cluster-admin, as a managed-serviceaccount would be.
func (f *fixture) clusterAdminToken(t *testing.T, ns, name string) string {
	f.create(t, func() error {
		_, err := f.admin.CoreV1().ServiceAccounts(ns).Create(f.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	})
	f.create(t, func() error {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		}
		_, err := f.admin.RbacV1().ClusterRoleBindings().Create(f.ctx, crb, metav1.CreateOptions{})
		return err
	})
	return f.token(t, ns, name)
}

func (f *fixture) token(t *testing.T, ns, name string) string {
	expiry := int64(3600)
	tr, err := f.admin.CoreV1().ServiceAccounts(ns).CreateToken(f.ctx, name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}

// execPlugin stands in for cp-creds: it succeeds only when Argo CD hands it
// the cluster's name (the config object) and server in KUBERNETES_EXEC_INFO,
// which needs provideClusterInfo to be honoured.
const execPlugin = `#!/bin/sh
case "$KUBERNETES_EXEC_INFO" in
*'"clusterName":"c1"'*) ;;
*) echo "KUBERNETES_EXEC_INFO has no clusterName c1: $KUBERNETES_EXEC_INFO" >&2; exit 1 ;;
esac
case "$KUBERNETES_EXEC_INFO" in
*"\"server\":\"$EXPECTED_SERVER\""*) ;;
*) echo "KUBERNETES_EXEC_INFO has no server $EXPECTED_SERVER: $KUBERNETES_EXEC_INFO" >&2; exit 1 ;;
esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "$(cat "$TOKEN_FILE")"
`

func writeExecPlugin(t *testing.T, dir, token string) (plugin, tokenFile string) {
	plugin, tokenFile = filepath.Join(dir, "cp-creds"), filepath.Join(dir, "token")
	if err := os.WriteFile(plugin, []byte(execPlugin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return plugin, tokenFile
}

// createClusterSecret writes the Secret as the bundle does for a ClusterProfile.
func (f *fixture) createClusterSecret(t *testing.T, name, server string, ca []byte, plugin, tokenFile string, labels map[string]string) {
	config, err := json.Marshal(map[string]any{
		"tlsClientConfig": map[string]any{"caData": ca},
		"execProviderConfig": map[string]any{
			"command":            plugin,
			"args":               []string{"--managed-serviceaccount=argocd"},
			"env":                map[string]string{"TOKEN_FILE": tokenFile, "EXPECTED_SERVER": f.server},
			"apiVersion":         "client.authentication.k8s.io/v1",
			"provideClusterInfo": true,
			"config":             map[string]string{"clusterName": name},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	labels["argocd.argoproj.io/secret-type"] = "cluster"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + name, Labels: labels},
		Data:       map[string][]byte{"name": []byte(name), "server": []byte(server), "config": config},
	}
	f.create(t, func() error {
		_, err := f.admin.CoreV1().Secrets(argoNS).Create(f.ctx, secret, metav1.CreateOptions{})
		return err
	})
}

func (f *fixture) create(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

// check runs a subcommand in-process, as the probe's identity, and decodes
// its JSON into out.
func (f *fixture) check(t *testing.T, out any, args ...string) {
	t.Helper()
	args = append(args, "--kubeconfig", f.kubeconfig, "--namespace", argoNS)
	var stdout bytes.Buffer
	if err := run(f.ctx, args, &stdout); err != nil {
		t.Fatalf("argocd-check %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("argocd-check %s:\n%s", args[0], stdout.String())
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("decoding the output of %s: %v", args[0], err)
	}
}

func (f *fixture) testClusters(t *testing.T) {
	var out clustersOutput
	f.check(t, &out, "clusters")
	got := map[string]clusterOutput{}
	for _, c := range out.Clusters {
		got[c.Name] = c
	}
	if len(got) != 2 {
		t.Fatalf("want clusters c1 and c2 (no in-cluster entry), got %+v", out.Clusters)
	}
	c1 := got["c1"]
	if c1.Error != "" || c1.User != f.c1User || c1.Server != f.server || c1.Labels["env"] != "test" {
		t.Errorf("c1: want user %s at %s with env=test and no error, got %+v", f.c1User, f.server, c1)
	}
	if !strings.HasPrefix(c1.CredentialID, "JTI=") {
		t.Errorf("c1: want the API server's id of the plugin's token (JTI=…), got %+v", c1)
	}
	if _, ok := c1.Labels["argocd.argoproj.io/secret-type"]; ok {
		t.Errorf("c1: Argo CD drops the secret-type label, got %v", c1.Labels)
	}
	if c2 := got["c2"]; c2.Error == "" || c2.User != "" {
		t.Errorf("c2: want the exec plugin's refusal as its error, got %+v", c2)
	}
}

func (f *fixture) testSync(t *testing.T) {
	dir := t.TempDir()
	manifests := `apiVersion: v1
kind: Namespace
metadata:
  name: argocd-check-demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  namespace: argocd-check-demo
data:
  greeting: hello
`
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	f.syncSucceeds(t, 2, "sync", "--cluster", "c1", "--manifests", dir, "--app", "demo")
	cm, err := f.admin.CoreV1().ConfigMaps("argocd-check-demo").Get(f.ctx, "demo", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hello" || cm.Labels[appKey] != "demo" {
		t.Fatalf("want the ConfigMap synced with label %s=demo, got %+v, %v", appKey, cm, err)
	}

	f.syncSucceeds(t, 2, "sync", "--cluster", "c1", "--manifests", t.TempDir(), "--app", "demo", "--prune")
	f.wantGone(t, func() (metav1.Object, error) {
		return f.admin.CoreV1().ConfigMaps("argocd-check-demo").Get(f.ctx, "demo", metav1.GetOptions{})
	})
	f.wantGone(t, func() (metav1.Object, error) {
		return f.admin.CoreV1().Namespaces().Get(f.ctx, "argocd-check-demo", metav1.GetOptions{})
	})
}

func (f *fixture) syncSucceeds(t *testing.T, results int, args ...string) {
	t.Helper()
	var out syncOutput
	f.check(t, &out, args...)
	if out.Error != "" || out.Phase != "Succeeded" || !out.CacheSynced || out.Resources == 0 || out.Cluster != "c1" {
		t.Fatalf("want a Succeeded sync of c1 over a synced cache, got %+v", out)
	}
	if len(out.Results) != results {
		t.Fatalf("want %d results, got %+v", results, out.Results)
	}
}

// wantGone accepts an object being deleted: envtest runs no controllers, so
// the garbage collector never clears the foreground-deletion finalizer that
// Argo CD's prune asks for, nor the namespace controller a Namespace's.
func (f *fixture) wantGone(t *testing.T, get func() (metav1.Object, error)) {
	t.Helper()
	obj, err := get()
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil || obj.GetDeletionTimestamp() == nil {
		t.Fatalf("want the object pruned, got %v, %v", obj, err)
	}
}

func (f *fixture) testAppsetClusters(t *testing.T) {
	var out paramsOutput
	f.check(t, &out, "appset-clusters", "--selector", "env=test")
	if len(out.Params) != 1 || out.Params[0]["name"] != "c1" || out.Params[0]["server"] != f.server {
		t.Fatalf("want exactly c1's parameters, got %+v", out.Params)
	}
	if out.Params[0]["metadata.labels.env"] != "test" {
		t.Errorf("want c1's labels among its parameters, got %+v", out.Params[0])
	}
}

func (f *fixture) testAppsetDecisions(t *testing.T) {
	// The ConfigMap of OCM's Argo CD guide for the cluster-decision-resource generator.
	f.create(t, func() error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "ocm-placement-generator"},
			Data: map[string]string{
				"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions",
				"statusListKey": "decisions", "matchKey": "clusterName",
			},
		}
		_, err := f.admin.CoreV1().ConfigMaps(argoNS).Create(f.ctx, cm, metav1.CreateOptions{})
		return err
	})
	f.createPlacementDecision(t, "p1", "c1")
	var out paramsOutput
	f.check(t, &out, "appset-decisions", "--configmap", "ocm-placement-generator",
		"--label-selector", "cluster.open-cluster-management.io/placement=p1")
	if len(out.Params) != 1 {
		t.Fatalf("want one parameter set, got %+v", out.Params)
	}
	p := out.Params[0]
	if p["name"] != "c1" || p["server"] != f.server || p["clusterName"] != "c1" {
		t.Fatalf("want c1 resolved to its Secret's name and server, got %+v", p)
	}
}

// createPlacementDecision writes what OCM's placement controller would: the
// decision list is status, so it goes through the status subresource.
func (f *fixture) createPlacementDecision(t *testing.T, placement, cluster string) {
	pd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1",
		"kind":       "PlacementDecision",
		"metadata": map[string]any{
			"name":   placement + "-decision-1",
			"labels": map[string]any{"cluster.open-cluster-management.io/placement": placement},
		},
	}}
	client := f.dyn.Resource(placementDecisions).Namespace(argoNS)
	created, err := client.Create(f.ctx, pd, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{
		"decisions": []any{map[string]any{"clusterName": cluster, "reason": ""}},
	}
	if _, err := client.UpdateStatus(f.ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestVersion guards the version subcommand hack/argocd.sh relies on to check
// that the binary links the Argo CD release it was asked for.
func TestVersion(t *testing.T) {
	v := version()
	if !strings.HasPrefix(v.ArgoCD, "v3.") || !strings.HasPrefix(v.GitopsEngine, "v3.") {
		t.Fatalf("want the Argo CD and gitops-engine modules in the build info, got %+v", v)
	}
}
