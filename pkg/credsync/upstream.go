package credsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/klog/v2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

// DesiredMarks returns, while managed-serviceaccount's own syncer writes
// the copies, the annotations this syncer puts on each copy that syncer
// holds next to profile, by Secret name: the marks of a copy where this
// bundle's rules put one (the namespace serves the cluster and may receive
// the token: cp-creds then uses it, and sends its token only to a
// published server), none elsewhere (a forged or unserved profile, a
// namespace the ManagedServiceAccount does not name). A copy is the
// upstream syncer's copy of a source when its name and synced-from label
// are the source's and it is owned by the profile; only the manager and
// that syncer may write such Secrets (the chart's admission policy), so the
// marks vouch for a token neither of them took from anywhere else.
func DesiredMarks(profile *cpv1alpha1.ClusterProfile, served bool, cluster string, sources []Source, rules Rules,
	held map[string]*corev1.Secret) map[string]map[string]string {
	marks := map[string]map[string]string{}
	for _, s := range sources {
		name := cpcreds.SecretName(cluster, s.MSA.Name)
		secret, ok := held[name]
		if !ok || !upstreamCopyOf(secret, profile, cluster, s.MSA.Name) {
			continue
		}
		marks[name] = nil
		if !served || s.Token == nil || copyNameProblem(cluster, s.MSA.Name) != "" || !s.Receives(profile.Namespace, rules.Unscoped) {
			continue
		}
		annotations := desiredCopy(profile, cluster, s, rules).Annotations
		annotations[cpcreds.AnnotationUpstreamCopy] = "true"
		marks[name] = annotations
	}
	return marks
}

func upstreamCopyOf(secret *corev1.Secret, profile *cpv1alpha1.ClusterProfile, cluster, msa string) bool {
	if secret.Labels[LabelSyncedFrom] != cpcreds.SyncedFromValue(cluster, msa) || profile == nil {
		return false
	}
	for _, ref := range secret.OwnerReferences {
		if ref.UID == profile.UID {
			return true
		}
	}
	return false
}

// marked tells whether secret carries exactly the marks wanted (nil: none
// of the syncer's).
func marked(secret *corev1.Secret, want map[string]string) bool {
	for _, key := range append(copyAnnotations, cpcreds.AnnotationUpstreamCopy) {
		got, has := secret.Annotations[key]
		expected, wants := want[key]
		if has != wants || got != expected {
			return false
		}
	}
	return true
}

// reconcileMarks is Reconcile while this syncer yields: it creates,
// changes and deletes nothing of the upstream syncer's copies, and only
// keeps its own marks on them.
func (r *Reconciler) reconcileMarks(ctx context.Context, profile *cpv1alpha1.ClusterProfile, served bool, namespace, cluster string,
	sources []Source, rules Rules) error {
	held := map[string]*corev1.Secret{}
	for _, s := range sources {
		name := cpcreds.SecretName(cluster, s.MSA.Name)
		secret, err := optional.Get(ctx, r.copies, types.NamespacedName{Namespace: namespace, Name: name}, &corev1.Secret{})
		if err != nil {
			return fmt.Errorf("reading synced Secret %s/%s: %w", namespace, name, err)
		}
		if secret != nil {
			held[name] = secret
		}
	}
	var errs []error
	for name, want := range DesiredMarks(profile, served, cluster, sources, rules, held) {
		if marked(held[name], want) {
			continue
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Marking the upstream syncer's copy", "secret", klog.KRef(namespace, name), "vouched", want != nil)
		errs = append(errs, r.mark(ctx, held[name], want))
	}
	return errors.Join(errs...)
}

// mark applies the marks want on secret, or, for nil, removes every mark
// of the syncer's from it, whichever of its field managers set them (a copy
// this syncer made before it yielded carries them as its own fields): a
// copy that may not be vouched for must stop being one cp-creds uses.
func (r *Reconciler) mark(ctx context.Context, secret *corev1.Secret, want map[string]string) error {
	var err error
	if want != nil {
		err = ssa.Apply(ctx, r.client, secret.DeepCopy(), corev1ac.Secret(secret.Name, secret.Namespace).WithAnnotations(want), MarksFieldManager)
	} else {
		removed := map[string]any{}
		for _, key := range append(copyAnnotations, cpcreds.AnnotationUpstreamCopy) {
			removed[key] = nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": removed}}) // a map of strings always marshals
		err = r.client.Patch(ctx, secret.DeepCopy(), client.RawPatch(types.MergePatchType, patch), client.FieldOwner(MarksFieldManager))
	}
	metrics.SyncedSecretWrite(metrics.OpUpdate, err)
	return wrap(err, "marking", secret)
}
