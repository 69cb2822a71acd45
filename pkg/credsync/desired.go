package credsync

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
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
// profile so the copies go when the profile goes. A source whose copy would
// have no valid Secret name (see InvalidCopyNames) gets none.
func DesiredCopies(profile *cpv1alpha1.ClusterProfile, cluster string, sources []Source) []*corev1.Secret {
	var copies []*corev1.Secret
	for _, s := range sources {
		if s.Token == nil || len(s.Token.Data[cpcreds.SecretKeyToken]) == 0 || copyNameProblem(cluster, s.MSA.Name) != "" {
			continue
		}
		copies = append(copies, desiredCopy(profile, cluster, s))
	}
	return copies
}

// InvalidCopyNames maps each source whose copy cannot exist to why: the
// copy is named <cluster>-<msa>, and both names may have 253 characters
// where a Secret's name may have 253 in all. Creating it would fail on
// every retry; the copy is left out and the problem reported instead.
func InvalidCopyNames(cluster string, sources []Source) map[string]string {
	invalid := map[string]string{}
	for _, s := range sources {
		if problem := copyNameProblem(cluster, s.MSA.Name); problem != "" {
			invalid[s.MSA.Name] = problem
		}
	}
	return invalid
}

func copyNameProblem(cluster, msa string) string {
	name := cpcreds.SecretName(cluster, msa)
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return fmt.Sprintf("%q is no valid Secret name: %s", name, strings.Join(problems, "; "))
	}
	return ""
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
