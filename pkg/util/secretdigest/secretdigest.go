// Package secretdigest keeps Secrets in an informer cache with their data
// values replaced by SHA-256 digests, for controllers that only ever compare
// a Secret's data with what they want: a hub caches a copy of a token or a
// cluster config for every profile, each value kilobytes, and neither the
// values nor their tokens need to sit in memory.
package secretdigest

import (
	"bytes"
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/intern"
)

// AnnotationCached marks a Secret as such a cache holds it: its data values
// replaced by their digests. The mark lives in memory only and is never
// written.
const AnnotationCached = "clusterprofile.open-cluster-management.io/cached-digests"

// Transform is the cache transform: managedFields dropped, data replaced by
// digests, and what repeats across Secrets shared. A token copied into every
// namespace that serves its cluster gives copies with the same name, marks,
// owner kind and digests: one of each is held, down to whole labels,
// annotations and data maps.
func Transform() toolscache.TransformFunc {
	digests := intern.NewBytes()
	metadata, data := intern.NewStringMaps(), intern.NewBytesMaps()
	return func(in any) (any, error) {
		secret, ok := in.(*corev1.Secret)
		if !ok {
			return in, nil
		}
		secret.ManagedFields = nil
		if _, done := secret.Annotations[AnnotationCached]; done {
			return secret, nil
		}
		internMeta(&secret.ObjectMeta)
		for key, value := range secret.Data {
			secret.Data[intern.String(key)] = digests.Intern(digestOf(value))
		}
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		Mark(secret.Annotations)
		// Last: a shared map is never written again.
		secret.Labels = intern.Share(metadata, secret, secret.Labels)
		secret.Annotations = intern.Share(metadata, secret, secret.Annotations)
		secret.Data = intern.Share(data, secret, secret.Data)
		return secret, nil
	}
}

// internMeta shares the strings of a Secret's metadata that repeat across
// Secrets.
func internMeta(m *metav1.ObjectMeta) {
	m.Name, m.Namespace = intern.String(m.Name), intern.String(m.Namespace)
	intern.Map(m.Labels)
	intern.Map(m.Annotations)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = intern.String(ref.APIVersion), intern.String(ref.Kind), intern.String(ref.Name)
	}
}

// Digested tells whether s holds digests of its data: read from such a
// cache, or built from a Secret read from one (Mark).
func Digested(s *corev1.Secret) bool {
	_, digests := s.Annotations[AnnotationCached]
	return digests
}

// Mark marks annotations as those of a Secret built from digests: whatever
// compares it then compares digests, and no writer may send it (Digested).
func Mark(annotations map[string]string) { annotations[AnnotationCached] = "sha256" }

// digestOf is value's SHA-256 digest; an empty value stays empty, so that
// a Secret read from the cache still shows which values are empty.
func digestOf(value []byte) []byte {
	if len(value) == 0 {
		return nil
	}
	sum := sha256.Sum256(value)
	return sum[:]
}

// SameValue tells whether current holds want's value under key (or neither
// holds the key). Either may hold digests (Digested) or values: what is
// compared is the digests.
func SameValue(current, want *corev1.Secret, key string) bool {
	got, has := current.Data[key]
	expected, wants := want.Data[key]
	if has != wants {
		return false
	}
	if !Digested(current) {
		got = digestOf(got)
	}
	if !Digested(want) {
		expected = digestOf(expected)
	}
	return bytes.Equal(got, expected)
}

// SameData tells whether current holds exactly want's data: the same keys,
// each with want's value (see SameValue).
func SameData(current, want *corev1.Secret) bool {
	if len(current.Data) != len(want.Data) {
		return false
	}
	for key := range want.Data {
		if !SameValue(current, want, key) {
			return false
		}
	}
	return true
}
