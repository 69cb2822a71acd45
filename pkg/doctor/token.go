package doctor

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// CopyRead is the token copy <cluster>-<msa> as read by the caller: the
// Secret, or the error of the GET.
type CopyRead struct {
	Secret *corev1.Secret
	Err    error
}

// checkCopy: the copy exists, is the syncer's (cpcreds.CheckCopy, the rule
// cp-creds itself applies), holds a token, and is not expired or about to.
// A missing copy is explained from src (missingCopyFix).
func checkCopy(read CopyRead, src CopySource, cluster string, s Settings) []string {
	name := cpcreds.SecretName(cluster, s.ManagedServiceAccount)
	switch {
	case apierrors.IsNotFound(read.Err):
		return []string{missingCopyFix(src, cluster, s)}
	case apierrors.IsForbidden(read.Err):
		return []string{fmt.Sprintf("You may not read Secret %s/%s, so the doctor cannot check it: run the doctor as someone who may get Secrets in %s.", s.Namespace, name, s.Namespace)}
	case read.Err != nil:
		return []string{fmt.Sprintf("Reading Secret %s/%s failed (%v): retry, or check the hub's API server.", s.Namespace, name, read.Err)}
	}
	if err := cpcreds.CheckCopy(read.Secret, cluster, s.ManagedServiceAccount); err != nil {
		return []string{sentence(err.Error())}
	}
	if len(read.Secret.Data[cpcreds.SecretKeyToken]) == 0 {
		return []string{fmt.Sprintf("Secret %s/%s has no %q key: the ManagedServiceAccount %s has no token yet; check its status in hub namespace %s.",
			s.Namespace, name, cpcreds.SecretKeyToken, s.ManagedServiceAccount, cluster)}
	}
	return checkExpiry(read.Secret, s)
}

// checkExpiry reads the syncer's expiry annotation. A copy without one
// passes: its ManagedServiceAccount reports no expiry, and cp-creds works
// without it.
func checkExpiry(secret *corev1.Secret, s Settings) []string {
	value, ok := secret.Annotations[cpcreds.AnnotationTokenExpiration]
	if !ok {
		return nil
	}
	ref := secret.Namespace + "/" + secret.Name
	expiry, err := time.Parse(time.RFC3339, value)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("Secret %s has the annotation %s=%q, which is not an RFC 3339 time: the syncer writes it, so something else edited the copy; delete it and the syncer rewrites it.",
			ref, cpcreds.AnnotationTokenExpiration, value)}
	case !s.Now.Before(expiry):
		return []string{fmt.Sprintf("The token in Secret %s expired at %s: the managed-serviceaccount agent on cluster %s has not rotated it; check ManagedServiceAccount %s there and on the hub.",
			ref, value, secret.Annotations[cpcreds.AnnotationSourceCluster], s.ManagedServiceAccount)}
	case expiry.Sub(s.Now) < s.ExpiryMargin:
		return []string{fmt.Sprintf("The token in Secret %s expires at %s, within %s: rotation is late; check ManagedServiceAccount %s's rotation and the managed-serviceaccount agent on cluster %s.",
			ref, value, s.ExpiryMargin, s.ManagedServiceAccount, secret.Annotations[cpcreds.AnnotationSourceCluster])}
	}
	return nil
}

// sentence makes an error message read as the row's sentence.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	out := []rune(msg)
	if out[0] >= 'a' && out[0] <= 'z' {
		out[0] -= 'a' - 'A'
	}
	if out[len(out)-1] != '.' {
		out = append(out, '.')
	}
	return string(out)
}
