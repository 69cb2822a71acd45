//go:build linux

package argocdcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
)

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
	cmd := exec.CommandContext(ctx, a.Check, append(args, "--kubeconfig", kubeconfig, "--namespace", Namespace)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NAMESPACE="+Namespace)
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

// Clusters is what argocd-check clusters prints: Argo CD's clusters,
// each with who its API server says Argo CD is.
type Clusters struct {
	Clusters []Cluster `json:"clusters"`
}

// Cluster is one Argo CD cluster as Argo CD's util/db reads it.
type Cluster struct {
	Name   string            `json:"name"`
	Server string            `json:"server"`
	Labels map[string]string `json:"labels"`
	User   string            `json:"user"`
	// CredentialID is the API server's id of the token it saw.
	CredentialID string `json:"credentialID"`
	Error        string `json:"error"`
}

// Sync is what argocd-check sync prints: gitops-engine's cache of the
// cluster, and its sync of the manifests.
type Sync struct {
	CacheSynced bool         `json:"cacheSynced"`
	Resources   int          `json:"resources"`
	Phase       string       `json:"phase"`
	Message     string       `json:"message"`
	Results     []SyncResult `json:"results"`
	Error       string       `json:"error"`
}

// SyncResult is what the sync did to one object.
type SyncResult struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

// Reached maps each cluster the bundle published (its cluster Secret
// labelled as the bundle's) to who its API server says Argo CD is.
func (c Clusters) Reached() map[string]string {
	out := map[string]string{}
	for _, cl := range c.Clusters {
		if cl.Labels[argocd.LabelCreatedBy] != "" {
			out[cl.Name] = cl.User
		}
	}
	return out
}
