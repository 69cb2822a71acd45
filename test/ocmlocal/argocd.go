//go:build linux

package ocmlocal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

const (
	// ArgoCDNamespace is Argo CD's namespace here, as its install manifests
	// name it.
	ArgoCDNamespace = "argocd"
	// argoCDController and argoCDApplicationSets are the service accounts
	// of Argo CD's application controller (and server: the same rights in
	// argocd) and of its ApplicationSet controller.
	argoCDController      = "argocd-application-controller"
	argoCDApplicationSets = "argocd-applicationset-controller"
	// ArgoCDUser is who the docs' argocd ManagedServiceAccount is on each
	// cluster: the ServiceAccount managed-serviceaccount's agent makes.
	ArgoCDUser = "system:serviceaccount:open-cluster-management-agent-addon:argocd"
	// argoCDExamples holds the files docs/consumers.md ("Argo CD") has a
	// platform engineer apply.
	argoCDExamples = "docs/examples/argocd"
)

// ErrNoArgoCDCheck: bin/argocd-check is not built (make argocd builds it
// when the go command can fetch the toolchain Argo CD needs).
var ErrNoArgoCDCheck = errors.New("bin/argocd-check not built (make argocd: it needs the Go 1.27.3 toolchain from the module proxy)")

// startArgoCD prepares the hub for the bundle's Argo CD integration as a
// platform engineer who runs Argo CD would: Argo CD's namespace (the
// chart's Role goes there), and the cp-creds Argo CD's pods would copy
// from the bundle's image (the image's, with Options.Registry). Argo CD
// itself does not run as a process here: its code runs in
// bin/argocd-check, as Argo CD's service account (see ArgoCD).
func (e *Env) startArgoCD(ctx context.Context) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ArgoCDNamespace}}
	if err := client.IgnoreAlreadyExists(hub.Create(ctx, ns)); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ArgoCDNamespace, err)
	}
	if e.ArgoCDPlugin, err = e.imagePlugin(); err != nil {
		return err
	}
	e.progressf("Argo CD's namespace %s ready, cp-creds at %s", ArgoCDNamespace, e.ArgoCDPlugin)
	return nil
}

// argoCDValues turn the bundle's Argo CD integration on, its cluster
// Secrets running the image's cp-creds.
func (e *Env) argoCDValues() map[string]any {
	return map[string]any{"namespace": ArgoCDNamespace, "cpCredsPath": e.ArgoCDPlugin}
}

// ArgoCDExample reads one of the docs' Argo CD files.
func ArgoCDExample(name string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), argoCDExamples, name))
	if err != nil {
		return nil, err
	}
	objects, err := chartrender.Objects(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return objects, nil
}

// PrepareArgoCD does what docs/consumers.md ("Argo CD") asks of a platform
// engineer, with its files, but binding a set into argocd: the argocd
// ManagedServiceAccount in each cluster's namespace and its RBAC on each
// cluster; and stands in for Argo CD's install: its argocd-cm and its
// controllers' service account with what they read in argocd. It returns
// Argo CD's code, ready to run as that service account.
func (e *Env) PrepareArgoCD(ctx context.Context) (*ArgoCD, error) {
	check := filepath.Join(RepoRoot(), "bin", "argocd-check")
	if _, err := os.Stat(check); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoArgoCDCheck, err)
	}
	hub, err := e.hubClient()
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: "argocd-cm",
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data: map[string]string{"cluster.inClusterEnabled": "false"}}
	if err := client.IgnoreAlreadyExists(hub.Create(ctx, cm)); err != nil {
		return nil, err
	}
	for _, c := range e.Clusters {
		if err := e.argoCDOnCluster(ctx, hub, c); err != nil {
			return nil, err
		}
	}
	argo := &ArgoCD{Check: check}
	if argo.controller, err = e.argoCDKubeconfig(ctx, hub, argoCDController); err != nil {
		return nil, err
	}
	if argo.applicationSets, err = e.argoCDKubeconfig(ctx, hub, argoCDApplicationSets); err != nil {
		return nil, err
	}
	return argo, nil
}

// argoCDOnCluster creates the docs' argocd ManagedServiceAccount in the
// cluster's namespace and applies the docs' RBAC on the cluster.
func (e *Env) argoCDOnCluster(ctx context.Context, hub client.Client, c *ManagedCluster) error {
	msa, err := ArgoCDExample("managedserviceaccount.yaml")
	if err != nil {
		return err
	}
	for _, u := range msa {
		u.SetNamespace(c.Name)
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, u)); err != nil {
			return fmt.Errorf("the argocd ManagedServiceAccount of %s: %w", c.Name, err)
		}
	}
	rbac, err := ArgoCDExample("managed-cluster-rbac.yaml")
	if err != nil {
		return err
	}
	managed, err := client.New(c.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	for _, u := range rbac {
		if err := client.IgnoreAlreadyExists(managed.Create(ctx, u)); err != nil {
			return fmt.Errorf("the argocd RBAC on %s: %w", c.Name, err)
		}
	}
	return nil
}

// argoCDKubeconfig writes a kubeconfig of one of Argo CD's service accounts
// in argocd, with the rights Argo CD's install.yaml gives each there that
// matter here: read Secrets (cluster Secrets, token copies) and ConfigMaps
// (its settings, the generator's). The docs' placement.yaml adds what the
// ApplicationSet controller needs for OCM's PlacementDecisions.
func (e *Env) argoCDKubeconfig(ctx context.Context, hub client.Client, identity string) (string, error) {
	objects := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: identity}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: identity}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: identity},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: identity},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ArgoCDNamespace, Name: identity}}},
	}
	for _, o := range objects {
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, o)); err != nil {
			return "", err
		}
	}
	cs, err := kubernetes.NewForConfig(e.HubConfig())
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(ArgoCDNamespace).CreateToken(ctx, identity, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: e.Hub.Config.Host, CertificateAuthorityData: e.Hub.Config.CAData}
	cfg.AuthInfos[identity] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["argocd"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: identity, Namespace: ArgoCDNamespace}
	cfg.CurrentContext = "argocd"
	path := filepath.Join(e.WorkDir, identity+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// ArgoCD is Argo CD's own code (bin/argocd-check) with the identities of
// Argo CD's controllers in argocd.
type ArgoCD struct {
	Check string
	// controller and applicationSets are the kubeconfigs of the
	// application controller's and the ApplicationSet controller's
	// service accounts.
	controller, applicationSets string
}

// Run runs argocd-check as Argo CD's pods would run its code: the
// ApplicationSet generators (appset-*) as the ApplicationSet controller,
// the rest as the application controller, with that identity's kubeconfig
// (KUBECONFIG, which cp-creds reads too) and its namespace (NAMESPACE,
// where cp-creds finds the copies); it decodes the JSON it prints into out
// and returns its stderr, which holds the exec plugins' own.
func (a *ArgoCD) Run(ctx context.Context, out any, args ...string) (string, error) {
	kubeconfig := a.controller
	if len(args) > 0 && strings.HasPrefix(args[0], "appset-") {
		kubeconfig = a.applicationSets
	}
	cmd := exec.CommandContext(ctx, a.Check, append(args, "--kubeconfig", kubeconfig, "--namespace", ArgoCDNamespace)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NAMESPACE="+ArgoCDNamespace)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stderr.String(), fmt.Errorf("argocd-check %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return stderr.String(), fmt.Errorf("argocd-check %s printed %q: %w", strings.Join(args, " "), stdout.String(), err)
	}
	return stderr.String(), nil
}

// ArgoCDClusters is what argocd-check clusters prints: Argo CD's clusters,
// each with who its API server says Argo CD is.
type ArgoCDClusters struct {
	Clusters []ArgoCDCluster `json:"clusters"`
}

// ArgoCDCluster is one Argo CD cluster as Argo CD's util/db reads it.
type ArgoCDCluster struct {
	Name   string            `json:"name"`
	Server string            `json:"server"`
	Labels map[string]string `json:"labels"`
	User   string            `json:"user"`
	// CredentialID is the API server's id of the token it saw.
	CredentialID string `json:"credentialID"`
	Error        string `json:"error"`
}

// ArgoCDSync is what argocd-check sync prints: gitops-engine's cache of the
// cluster, and its sync of the manifests.
type ArgoCDSync struct {
	CacheSynced bool               `json:"cacheSynced"`
	Resources   int                `json:"resources"`
	Phase       string             `json:"phase"`
	Message     string             `json:"message"`
	Results     []ArgoCDSyncResult `json:"results"`
	Error       string             `json:"error"`
}

// ArgoCDSyncResult is what the sync did to one object.
type ArgoCDSyncResult struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

// Reached maps each cluster the bundle published (its cluster Secret
// labelled as the bundle's) to who its API server says Argo CD is.
func (c ArgoCDClusters) Reached() map[string]string {
	out := map[string]string{}
	for _, cl := range c.Clusters {
		if cl.Labels[argocd.LabelCreatedBy] != "" {
			out[cl.Name] = cl.User
		}
	}
	return out
}

// Named is the cluster of that name, or none.
func (c ArgoCDClusters) Named(name string) ArgoCDCluster {
	for _, cl := range c.Clusters {
		if cl.Name == name {
			return cl
		}
	}
	return ArgoCDCluster{}
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
