package argocd

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
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

// profileHoldingName maps any Secret named cluster-<profile> in Argo CD's
// namespace to that profile, when the profile is there: only then can the
// Secret hold a name the profile's cluster Secret needs. Other Secrets
// there often start with the prefix too (a token copy of cluster
// cluster-east is cluster-east-<msa>) and would each queue a key for
// nothing. Our own Secrets map through profileOfSecret, profile or not.
func (r *Reconciler) profileHoldingName(ctx context.Context, obj client.Object) []reconcile.Request {
	requests := r.profileOfSecret(ctx, obj)
	if len(requests) == 0 {
		return nil
	}
	if err := r.client.Get(ctx, requests[0].NamespacedName, &cpv1alpha1.ClusterProfile{}, client.UnsafeDisableDeepCopy); err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "Reading the ClusterProfile a Secret's name points to", "profile", requests[0].NamespacedName)
			return requests
		}
		return nil
	}
	return requests
}
