package credsync

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// Source is a ManagedServiceAccount that asks for its token to be synced,
// with its token Secret (nil while the agent has not written it).
type Source struct {
	MSA   *authv1beta1.ManagedServiceAccount
	Token *corev1.Secret
}

// DesiredCopies returns the Secrets that the namespace of profile must hold
// for cluster: one per source with a token, carrying only the token and the
// CA, the token's expiry, where it came from, and an owner reference to the
// profile so the copies go when the profile goes.
func DesiredCopies(profile *cpv1alpha1.ClusterProfile, cluster string, sources []Source) []*corev1.Secret {
	var copies []*corev1.Secret
	for _, s := range sources {
		if s.Token == nil || len(s.Token.Data[cpcreds.SecretKeyToken]) == 0 {
			continue
		}
		copies = append(copies, desiredCopy(profile, cluster, s))
	}
	return copies
}

func desiredCopy(profile *cpv1alpha1.ClusterProfile, cluster string, s Source) *corev1.Secret {
	annotations := map[string]string{
		cpcreds.AnnotationSourceCluster:               cluster,
		cpcreds.AnnotationSourceManagedServiceAccount: s.MSA.Name,
	}
	if expiry := s.MSA.Status.ExpirationTimestamp; expiry != nil && !expiry.IsZero() {
		annotations[cpcreds.AnnotationTokenExpiration] = expiry.UTC().Format(time.RFC3339)
	}
	data := map[string][]byte{cpcreds.SecretKeyToken: s.Token.Data[cpcreds.SecretKeyToken]}
	if ca, ok := s.Token.Data[cpcreds.SecretKeyCA]; ok {
		data[cpcreds.SecretKeyCA] = ca
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   profile.Namespace,
			Name:        cpcreds.SecretName(cluster, s.MSA.Name),
			Labels:      map[string]string{LabelSyncedFrom: cpcreds.SyncedFromValue(cluster, s.MSA.Name)},
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: cpv1alpha1.GroupVersion.String(), Kind: "ClusterProfile",
				Name: profile.Name, UID: profile.UID, BlockOwnerDeletion: ptr.To(false),
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}
