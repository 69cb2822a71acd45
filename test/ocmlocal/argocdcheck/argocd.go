//go:build linux

// Package argocdcheck prepares the harness's hub for Argo CD as
// docs/consumers.md ("Argo CD") asks of a platform engineer, with the
// docs' files, and runs Argo CD's own code (bin/argocd-check, `make
// argocd`) as the service accounts of Argo CD's controllers: Argo CD
// itself does not run as a process here.
package argocdcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
)

const (
	// Namespace is Argo CD's namespace here, as its install manifests name
	// it.
	Namespace = "argocd"
	// argoCDController and argoCDApplicationSets are the service accounts
	// of Argo CD's application controller (and server: the same rights in
	// argocd) and of its ApplicationSet controller.
	argoCDController      = "argocd-application-controller"
	argoCDApplicationSets = "argocd-applicationset-controller"
	// argoCDExamples holds the files docs/consumers.md ("Argo CD") has a
	// platform engineer apply.
	argoCDExamples = "docs/examples/argocd"
)

// ErrNotBuilt: bin/argocd-check is not built (make argocd builds it when
// the go command can fetch the toolchain Argo CD needs).
var ErrNotBuilt = errors.New("bin/argocd-check not built (make argocd: it needs the Go 1.27.3 toolchain from the module proxy)")

// CreateNamespace creates Argo CD's namespace on the hub (the bundle's
// chart puts its Role there).
func CreateNamespace(ctx context.Context, hub *controlplane.ControlPlane) error {
	c, err := hubClient(hub)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := client.IgnoreAlreadyExists(c.Create(ctx, ns)); err != nil {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	return nil
}

// Values turn the bundle's Argo CD integration on in its chart, its
// cluster Secrets running the cp-creds at plugin.
func Values(plugin string) map[string]any {
	return map[string]any{"namespace": Namespace, "cpCredsPath": plugin}
}

func hubClient(hub *controlplane.ControlPlane) (client.Client, error) {
	return client.New(hub.Config, client.Options{Scheme: scheme.New()})
}

// Example reads one of the docs' Argo CD files.
func Example(name string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(binaries.RepoRoot(), argoCDExamples, name))
	if err != nil {
		return nil, err
	}
	objects, err := chartrender.Objects(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return objects, nil
}

// Prepare does what docs/consumers.md ("Argo CD") asks of a platform
// engineer, with its files, but binding a set into argocd: the argocd
// ManagedServiceAccount in each cluster's namespace and its RBAC on each
// cluster; and stands in for Argo CD's install: its argocd-cm and its
// controllers' service account with what they read in argocd. It returns
// Argo CD's code, ready to run as that service account, its kubeconfigs
// in workDir.
func Prepare(ctx context.Context, hubPlane *controlplane.ControlPlane, clusters []*controlplane.ControlPlane, workDir string) (*ArgoCD, error) {
	check := filepath.Join(binaries.RepoRoot(), "bin", "argocd-check")
	if _, err := os.Stat(check); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotBuilt, err)
	}
	hub, err := hubClient(hubPlane)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "argocd-cm",
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data: map[string]string{"cluster.inClusterEnabled": "false"}}
	if err := client.IgnoreAlreadyExists(hub.Create(ctx, cm)); err != nil {
		return nil, err
	}
	for _, c := range clusters {
		if err := onCluster(ctx, hub, c); err != nil {
			return nil, err
		}
	}
	argo := &ArgoCD{Check: check}
	if argo.controller, err = writeKubeconfig(ctx, hubPlane, hub, workDir, argoCDController); err != nil {
		return nil, err
	}
	if argo.applicationSets, err = writeKubeconfig(ctx, hubPlane, hub, workDir, argoCDApplicationSets); err != nil {
		return nil, err
	}
	return argo, nil
}

// onCluster creates the docs' argocd ManagedServiceAccount in the
// cluster's namespace and applies the docs' RBAC on the cluster.
func onCluster(ctx context.Context, hub client.Client, c *controlplane.ControlPlane) error {
	msa, err := Example("managedserviceaccount.yaml")
	if err != nil {
		return err
	}
	for _, u := range msa {
		u.SetNamespace(c.Name)
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, u)); err != nil {
			return fmt.Errorf("the argocd ManagedServiceAccount of %s: %w", c.Name, err)
		}
	}
	rbac, err := Example("managed-cluster-rbac.yaml")
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

// writeKubeconfig writes a kubeconfig of one of Argo CD's service accounts
// in argocd, with the rights Argo CD's install.yaml gives each there that
// matter here: read Secrets (cluster Secrets, token copies) and ConfigMaps
// (its settings, the generator's). The docs' placement.yaml adds what the
// ApplicationSet controller needs for OCM's PlacementDecisions.
func writeKubeconfig(ctx context.Context, hubPlane *controlplane.ControlPlane, hub client.Client, workDir, identity string) (string, error) {
	objects := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: identity}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: identity}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: identity},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: identity},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: identity}}},
	}
	for _, o := range objects {
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, o)); err != nil {
			return "", err
		}
	}
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(hubPlane.Config))
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, identity, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hubPlane.Config.Host, CertificateAuthorityData: hubPlane.Config.CAData}
	cfg.AuthInfos[identity] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["argocd"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: identity, Namespace: Namespace}
	cfg.CurrentContext = "argocd"
	path := filepath.Join(workDir, identity+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
