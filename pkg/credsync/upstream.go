package credsync

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/klog/v2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

// DesiredMarks returns, while managed-serviceaccount's own syncer writes
// the copies, the annotations this syncer puts on each copy that syncer
// holds next to profile where this bundle's rules want one (desired, the
// copies this syncer would write: the namespace serves the cluster and may
// receive the token), by Secret name: cp-creds then uses it, and sends its
// token only to a published server. A copy is the upstream syncer's copy of
// a desired one when its name and synced-from label are the desired one's
// and it is owned by the profile; only the manager and that syncer may write
// such Secrets (the chart's admission policy), so the marks vouch for a
// token neither of them took from anywhere else. Copies the rules do not
// want are deleted, not unmarked (planCopies).
func DesiredMarks(profile *cpv1alpha1.ClusterProfile, desired []*corev1.Secret, existing []*corev1.Secret) map[string]map[string]string {
	held := map[string]*corev1.Secret{}
	for _, s := range existing {
		held[s.Name] = s
	}
	marks := map[string]map[string]string{}
	for _, want := range desired {
		secret, ok := held[want.Name]
		if !ok || !upstreamCopyOf(secret, profile, want.Labels[LabelSyncedFrom]) {
			continue
		}
		annotations := make(map[string]string, len(copyAnnotations)+1)
		for _, k := range copyAnnotations {
			if v, ok := want.Annotations[k]; ok {
				annotations[k] = v
			}
		}
		annotations[cpcreds.AnnotationUpstreamCopy] = "true"
		marks[want.Name] = annotations
	}
	return marks
}

func upstreamCopyOf(secret *corev1.Secret, profile *cpv1alpha1.ClusterProfile, syncedFrom string) bool {
	if profile == nil || secret.Labels[LabelSyncedFrom] != syncedFrom {
		return false
	}
	for _, ref := range secret.OwnerReferences {
		if ref.UID == profile.UID {
			return true
		}
	}
	return false
}

// marked tells whether secret carries exactly the marks wanted.
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

// reconcileMarks keeps, while this syncer yields, its marks on the upstream
// syncer's copies that this bundle's rules want (desired); existing are the
// copies read.
func (r *Reconciler) reconcileMarks(ctx context.Context, profile *cpv1alpha1.ClusterProfile, desired, existing []*corev1.Secret) error {
	held := map[string]*corev1.Secret{}
	for _, s := range existing {
		held[s.Name] = s
	}
	var errs []error
	for name, want := range DesiredMarks(profile, desired, existing) {
		if marked(held[name], want) {
			continue
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Marking the upstream syncer's copy", "secret", klog.KObj(held[name]))
		errs = append(errs, r.mark(ctx, held[name], want))
	}
	return errors.Join(errs...)
}

// mark applies the marks want on secret.
func (r *Reconciler) mark(ctx context.Context, secret *corev1.Secret, want map[string]string) error {
	err := ssa.Apply(ctx, r.client, secret.DeepCopy(), corev1ac.Secret(secret.Name, secret.Namespace).WithAnnotations(want), MarksFieldManager)
	metrics.SyncedSecretWrite(metrics.OpUpdate, err)
	return wrap(err, "marking", secret)
}

// reportRevokedUpstreamCopy reports a copy another syncer wrote where this
// bundle's rules allow none, and which this syncer deleted (log line,
// upstream_writes_revoked metric). managed-serviceaccount's own syncer
// copies every token next to every profile that carries the cluster
// manager's labels, and writes it again on its next reconcile of that
// profile: a count that keeps rising says it is still on.
func (r *Reconciler) reportRevokedUpstreamCopy(ctx context.Context, secret *corev1.Secret) {
	metrics.UpstreamWriteRevoked(metrics.KindCopy)
	ctrl.LoggerFrom(ctx).Info("Deleted a token copy another syncer (such as managed-serviceaccount's own) wrote where this bundle's rules allow none; "+
		"turn that syncer off, or it writes the copy again", "secret", klog.KObj(secret), "syncedFrom", secret.Labels[LabelSyncedFrom])
}
