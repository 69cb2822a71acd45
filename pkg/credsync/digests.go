package credsync

import (
	"bytes"
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// annotationCachedDigests marks a copy as the copies cache holds it: its
// data values replaced by their SHA-256 digests. The syncer only ever
// compares a copy's data with what it wants, so the cache need not hold
// tens of thousands of tokens and CA bundles; the mark lives in memory only
// and is never written.
const annotationCachedDigests = "clusterprofile.open-cluster-management.io/cached-digests"

// digestCopies is the copies cache's transform: managedFields dropped, data
// replaced by digests.
func digestCopies() toolscache.TransformFunc {
	return func(in any) (any, error) {
		secret, ok := in.(*corev1.Secret)
		if !ok {
			return in, nil
		}
		secret.ManagedFields = nil
		if _, done := secret.Annotations[annotationCachedDigests]; done {
			return secret, nil
		}
		for key, value := range secret.Data {
			sum := sha256.Sum256(value)
			secret.Data[key] = sum[:]
		}
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[annotationCachedDigests] = "sha256"
		return secret, nil
	}
}

// sameData tells whether current holds want's value under key (or neither
// holds the key); current may come from the copies cache (digests) or the
// API server (values).
func sameData(current, want *corev1.Secret, key string) bool {
	got, has := current.Data[key]
	expected, wants := want.Data[key]
	if has != wants {
		return false
	}
	if _, digests := current.Annotations[annotationCachedDigests]; digests {
		sum := sha256.Sum256(expected)
		return bytes.Equal(got, sum[:])
	}
	return bytes.Equal(got, expected)
}
