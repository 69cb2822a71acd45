//go:build linux

package ocmlocal

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ArgoCDNamespace is Argo CD's namespace here, as its install manifests
// name it.
const ArgoCDNamespace = "argocd"

// startArgoCD prepares the hub for the bundle's Argo CD integration as a
// platform engineer who runs Argo CD would: Argo CD's namespace (the
// chart's Role goes there), and the cp-creds Argo CD's pods would copy
// from the bundle's image (the image's, with Options.Registry). Argo CD
// itself does not run as a process here: test/e2e runs its code
// (bin/argocd-check) as Argo CD's service account would.
func (e *Env) startArgoCD(ctx context.Context) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ArgoCDNamespace}}
	if err := createIgnoringExists(ns, hub.Create(ctx, ns)); err != nil {
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
