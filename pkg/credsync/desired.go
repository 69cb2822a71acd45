package credsync

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

// Source is a ManagedServiceAccount that asks for its token to be synced,
// with its token Secret (nil while the agent has not written it).
type Source struct {
	MSA   *authv1beta1.ManagedServiceAccount
	Token *corev1.Secret
}

// UnscopedTokens says where the token of a ManagedServiceAccount that names
// no consumer namespaces (cpcreds.AnnotationConsumerNamespaces) goes.
type UnscopedTokens string

const (
	// UnscopedEverywhere copies it into every namespace that serves its
	// cluster, as upstream's syncer does and OCM's guide expects; every
	// consumer there can use it, and the copies say so.
	UnscopedEverywhere UnscopedTokens = "everywhere"
	// UnscopedNowhere copies it nowhere: a token goes only where its owner
	// sends it.
	UnscopedNowhere UnscopedTokens = "nowhere"
)

// String, Set and Type make it a command-line flag that takes only those two.
func (u *UnscopedTokens) String() string { return string(*u) }

func (u *UnscopedTokens) Set(value string) error {
	switch v := UnscopedTokens(value); v {
	case UnscopedEverywhere, UnscopedNowhere:
		*u = v
		return nil
	}
	return fmt.Errorf("must be %s or %s, not %q", UnscopedEverywhere, UnscopedNowhere, value)
}

func (u *UnscopedTokens) Type() string { return "everywhere|nowhere" }

// Rules are the hub's rules for the copies of one cluster's tokens.
type Rules struct {
	// Unscoped is where unscoped tokens go (UnscopedEverywhere when empty).
	Unscoped UnscopedTokens
	// Servers are the servers this bundle's access entries publish for the
	// cluster: the only ones cp-creds sends the token to.
	Servers []cpcreds.PublishedServer
}

// DesiredCopies returns the Secrets that the namespace of profile must hold
// for cluster: one per source with a token that may go there (Receives),
// carrying only the token and the CA, the token's expiry, where it came
// from, the servers it may be sent to, and an owner reference to the profile
// so the copies go when the profile goes. A source whose copy would have no
// valid Secret name (see InvalidCopyNames) gets none.
func DesiredCopies(profile *cpv1alpha1.ClusterProfile, cluster string, sources []Source, rules Rules) []*corev1.Secret {
	var copies []*corev1.Secret
	for _, s := range sources {
		if s.Token == nil || len(s.Token.Data[cpcreds.SecretKeyToken]) == 0 || copyNameProblem(cluster, s.MSA.Name) != "" ||
			!s.Receives(profile.Namespace, rules.Unscoped) {
			continue
		}
		copies = append(copies, desiredCopy(profile, cluster, s, rules))
	}
	return copies
}

// Receives tells whether namespace may receive the source's token: it is
// one the ManagedServiceAccount names, or, for one that names none, what
// unscoped says.
func (s Source) Receives(namespace string, unscoped UnscopedTokens) bool {
	scope := ScopeOf(s.MSA)
	if !scope.Scoped {
		return unscoped != UnscopedNowhere
	}
	return scope.Namespaces.Has(namespace)
}

// Scope is what a ManagedServiceAccount says about where its token goes.
type Scope struct {
	// Scoped is true when it carries cpcreds.AnnotationConsumerNamespaces.
	Scoped bool
	// Namespaces are the valid namespace names it lists.
	Namespaces sets.Set[string]
	// Invalid are the entries that name no namespace (a wildcard, say),
	// which name nothing.
	Invalid []string
}

// ScopeOf reads a ManagedServiceAccount's consumer namespaces: a
// comma-separated list of namespace names, blanks around them ignored. An
// empty list is a scope too: the token goes nowhere.
func ScopeOf(msa *authv1beta1.ManagedServiceAccount) Scope {
	value, ok := msa.Annotations[cpcreds.AnnotationConsumerNamespaces]
	scope := Scope{Scoped: ok, Namespaces: sets.New[string]()}
	for _, entry := range strings.Split(value, ",") {
		name := strings.TrimSpace(entry)
		switch {
		case name == "":
		case len(validation.IsDNS1123Label(name)) > 0:
			scope.Invalid = append(scope.Invalid, name)
		default:
			scope.Namespaces.Insert(name)
		}
	}
	return scope
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

func desiredCopy(profile *cpv1alpha1.ClusterProfile, cluster string, s Source, rules Rules) *corev1.Secret {
	annotations := map[string]string{
		cpcreds.AnnotationSourceCluster:               cluster,
		cpcreds.AnnotationSourceManagedServiceAccount: s.MSA.Name,
		cpcreds.AnnotationPublishedServers:            cpcreds.EncodePublishedServers(rules.Servers),
	}
	if !ScopeOf(s.MSA).Scoped {
		annotations[cpcreds.AnnotationUnscoped] = "true"
	}
	if expiry := s.MSA.Status.ExpirationTimestamp; expiry != nil && !expiry.IsZero() {
		annotations[cpcreds.AnnotationTokenExpiration] = expiry.UTC().Format(time.RFC3339)
	}
	if secretdigest.Digested(s.Token) {
		// Built from the tokens cache: good to compare, never to write.
		secretdigest.Mark(annotations)
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
