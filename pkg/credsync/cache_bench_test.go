package credsync

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// BenchmarkCachedCopy reports the heap one token copy takes in the copies
// cache (bytes/copy), decoded as the informer decodes it (protobuf) and
// through digestCopies, on a hub of 500 clusters with one token each copied
// into 10 namespaces.
func BenchmarkCachedCopy(b *testing.B) {
	const clusters, namespaces = 500, 10
	var perCopy float64
	for b.Loop() {
		perCopy = cachedBytesPerCopy(b, clusters, namespaces)
	}
	b.ReportMetric(perCopy, "bytes/copy")
}

func cachedBytesPerCopy(b *testing.B, clusters, namespaces int) float64 {
	transform := secretdigest.Transform()
	return utiltesting.HeapBytesPerObject(clusters*namespaces, func(i int) any {
		copied := apiServerCopy(fmt.Sprintf("cluster-%05d", i/namespaces), fmt.Sprintf("team-%02d", i%namespaces), i)
		return utiltesting.Cached(b, copied, &corev1.Secret{}, transform)
	})
}

// apiServerCopy is a token copy as the API server returns it: the syncer's
// fields plus what the server adds.
func apiServerCopy(cluster, namespace string, i int) *corev1.Secret {
	const msa = "bench-msa"
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: cpcreds.SecretName(cluster, msa),
			UID:               types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)),
			ResourceVersion:   fmt.Sprint(100000 + i),
			CreationTimestamp: metav1.Unix(1795000000, 0),
			Labels:            map[string]string{LabelSyncedFrom: cpcreds.SyncedFromValue(cluster, msa)},
			Annotations: map[string]string{
				cpcreds.AnnotationSourceCluster: cluster, cpcreds.AnnotationSourceManagedServiceAccount: msa,
				cpcreds.AnnotationTokenExpiration: "2026-12-01T00:00:00Z",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ClusterProfile", Name: cluster,
				UID: types.UID(fmt.Sprintf("11111111-0000-0000-0000-%012d", i)), BlockOwnerDeletion: ptr.To(false),
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "clusterprofile-credsync", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:ca.crt":{},"f:token":{}},"f:metadata":{"f:annotations":{}}}`)},
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			cpcreds.SecretKeyToken: []byte(strings.Repeat("t", 1100) + cluster),
			cpcreds.SecretKeyCA:    []byte(strings.Repeat("c", 1500) + cluster),
		},
	}
}

// BenchmarkCachedToken reports the heap one of the agent's token Secrets
// takes in the tokens cache (bytes/token), decoded as the informer decodes
// it, kept whole and through the cache's digests, on a hub of 3,500
// clusters with one token each.
func BenchmarkCachedToken(b *testing.B) {
	const clusters = 3500
	for name, transform := range map[string]func(any) (any, error){
		"whole":   func(in any) (any, error) { in.(*corev1.Secret).ManagedFields = nil; return in, nil },
		"digests": secretdigest.Transform(),
	} {
		b.Run(name, func(b *testing.B) {
			var perToken float64
			for b.Loop() {
				perToken = utiltesting.HeapBytesPerObject(clusters, func(i int) any {
					return utiltesting.Cached(b, agentToken(fmt.Sprintf("cluster-%05d", i), i), &corev1.Secret{}, transform)
				})
			}
			b.ReportMetric(perToken, "bytes/token")
		})
	}
}

// agentToken is a ManagedServiceAccount's token Secret as the API server
// returns it: a token and the cluster's CA, labelled, owned by the
// ManagedServiceAccount.
func agentToken(cluster string, i int) *corev1.Secret {
	const msa = "bench-msa"
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster, Name: msa,
			UID:               types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)),
			ResourceVersion:   fmt.Sprint(100000 + i),
			CreationTimestamp: metav1.Unix(1795000000, 0),
			Labels:            map[string]string{LabelIsManagedServiceAccount: "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "authentication.open-cluster-management.io/v1beta1", Kind: "ManagedServiceAccount", Name: msa,
				UID: types.UID(fmt.Sprintf("11111111-0000-0000-0000-%012d", i)),
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			cpcreds.SecretKeyToken: []byte(strings.Repeat("t", 1100) + cluster),
			cpcreds.SecretKeyCA:    []byte(strings.Repeat("c", 1500) + cluster),
		},
	}
}
