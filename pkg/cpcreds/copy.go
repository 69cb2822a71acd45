package cpcreds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// LabelSyncedFrom marks a synced copy with <cluster>-<msa> (as upstream's
// syncer does), or with a hash of the pair where that is no valid label value.
const LabelSyncedFrom = "authentication.open-cluster-management.io/synced-from"

// SyncedFromValue is the synced-from label of the copy of msa's token for
// cluster: <cluster>-<msa>, or, when that is not a valid label value (longer
// than 63 characters, say), a stable hash of the pair.
func SyncedFromValue(cluster, msa string) string {
	value := SecretName(cluster, msa)
	if len(validation.IsValidLabelValue(value)) == 0 {
		return value
	}
	sum := sha256.Sum256([]byte(cluster + "/" + msa))
	return "sha256-" + hex.EncodeToString(sum[:])[:48]
}

// CopySource tells which cluster and ManagedServiceAccount a synced copy
// holds the token of. ok is true only when all of a copy's marks agree:
// both source annotations, and the synced-from label with the value the
// syncer writes for that pair. It is the one rule of what a copy is: the
// syncer manages, repairs and deletes only such Secrets, and CheckCopy
// accepts exactly these when they name the pair asked for.
func CopySource(secret *corev1.Secret) (cluster, msa string, ok bool) {
	cluster, hasCluster := secret.Annotations[AnnotationSourceCluster]
	msa, hasMSA := secret.Annotations[AnnotationSourceManagedServiceAccount]
	label, hasLabel := secret.Labels[LabelSyncedFrom]
	return cluster, msa, hasCluster && hasMSA && hasLabel && label == SyncedFromValue(cluster, msa)
}

// CheckCopy tells whether secret is the credential syncer's copy of msa's
// token for cluster: it carries the synced-from label with the value the
// syncer writes for that pair, and both source annotations name exactly that
// pair. Anything else is refused, with a message that says what is wrong: a
// Secret somebody created under the name (whose token would make the
// consumer act as them), a half-annotated one, or the copy of another pair
// whose names join into the same Secret name.
func CheckCopy(secret *corev1.Secret, cluster, msa string) error {
	ref := secret.Namespace + "/" + secret.Name
	label, hasLabel := secret.Labels[LabelSyncedFrom]
	if !hasLabel {
		return fmt.Errorf("secret %s is not a synced token copy: it has no label %s, so the credential syncer did not write it; only its copies are used (delete the Secret and check the ManagedServiceAccount's sync label on the hub)",
			ref, LabelSyncedFrom)
	}
	gotCluster, hasCluster := secret.Annotations[AnnotationSourceCluster]
	gotMSA, hasMSA := secret.Annotations[AnnotationSourceManagedServiceAccount]
	switch {
	case !hasCluster:
		return fmt.Errorf("secret %s is not a complete synced token copy: the annotation %s is missing", ref, AnnotationSourceCluster)
	case !hasMSA:
		return fmt.Errorf("secret %s is not a complete synced token copy: the annotation %s is missing", ref, AnnotationSourceManagedServiceAccount)
	case gotCluster != cluster || gotMSA != msa:
		return fmt.Errorf("secret %s holds the token of cluster %q and ManagedServiceAccount %q, not of cluster %q and %q: the two names collide; rename one of the ManagedServiceAccounts",
			ref, gotCluster, gotMSA, cluster, msa)
	case label != SyncedFromValue(cluster, msa):
		return fmt.Errorf("secret %s has the label %s=%q where the credential syncer writes %q: it is not a synced token copy",
			ref, LabelSyncedFrom, label, SyncedFromValue(cluster, msa))
	}
	return nil
}
