package credsync

import (
	"bytes"
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/intern"
)

// annotationCachedDigests marks a copy as the copies cache holds it: its
// data values replaced by their SHA-256 digests. The syncer only ever
// compares a copy's data with what it wants, so the cache need not hold
// tens of thousands of tokens and CA bundles; the mark lives in memory only
// and is never written.
const annotationCachedDigests = "clusterprofile.open-cluster-management.io/cached-digests"

// digestCopies is the copies cache's transform: managedFields dropped, data
// replaced by digests, and what repeats across copies shared. A token is
// copied into every namespace that serves its cluster, so its copies carry
// the same name, marks, owner kind and digests: one copy of each is held,
// down to whole labels, annotations and data maps.
func digestCopies() toolscache.TransformFunc {
	digests := intern.NewBytes()
	metadata, data := intern.NewStringMaps(), intern.NewBytesMaps()
	return func(in any) (any, error) {
		secret, ok := in.(*corev1.Secret)
		if !ok {
			return in, nil
		}
		secret.ManagedFields = nil
		if _, done := secret.Annotations[annotationCachedDigests]; done {
			return secret, nil
		}
		internMeta(&secret.ObjectMeta)
		for key, value := range secret.Data {
			sum := sha256.Sum256(value)
			secret.Data[intern.String(key)] = digests.Intern(sum[:])
		}
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[annotationCachedDigests] = "sha256"
		// Last: a shared map is never written again.
		secret.Labels = intern.Share(metadata, secret, secret.Labels)
		secret.Annotations = intern.Share(metadata, secret, secret.Annotations)
		secret.Data = intern.Share(data, secret, secret.Data)
		return secret, nil
	}
}

// internMeta shares the strings of a copy's metadata that repeat across
// copies.
func internMeta(m *metav1.ObjectMeta) {
	m.Name, m.Namespace = intern.String(m.Name), intern.String(m.Namespace)
	intern.Map(m.Labels)
	intern.Map(m.Annotations)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = intern.String(ref.APIVersion), intern.String(ref.Kind), intern.String(ref.Name)
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
