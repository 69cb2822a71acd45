package argocd

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// inArgoCDNamespace passes only objects in Argo CD's namespace, the only
// ones this capability reads or writes.
func (r *Reconciler) inArgoCDNamespace(obj client.Object) bool {
	return obj.GetNamespace() == r.settings.Namespace
}

// profileOfSecret maps a Secret named cluster-<profile> in Argo CD's
// namespace (ours, or another holding the name) to that profile; any other
// Secret to nothing.
func (r *Reconciler) profileOfSecret(_ context.Context, obj client.Object) []reconcile.Request {
	if obj == nil || obj.GetNamespace() != r.settings.Namespace {
		return nil
	}
	profile, ok := strings.CutPrefix(obj.GetName(), SecretPrefix)
	if !ok || profile == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.settings.Namespace, Name: profile}}}
}
