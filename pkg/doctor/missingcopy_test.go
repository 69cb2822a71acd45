package doctor

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
)

// TestMissingCopyFix: each reason the credential syncer has for not copying
// a token into the consumer's namespace gets its own sentence and fix.
func TestMissingCopyFix(t *testing.T) {
	s := Settings{Namespace: "argocd", ManagedServiceAccount: "multikueue"}
	msa := func(labelled bool, annotation *string, token bool) *authv1beta1.ManagedServiceAccount {
		m := &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "multikueue",
			Labels: map[string]string{}, Annotations: map[string]string{}}}
		if labelled {
			m.Labels["authentication.open-cluster-management.io/sync-to-clusterprofile"] = "true"
		}
		if annotation != nil {
			m.Annotations["clusterprofile.open-cluster-management.io/consumer-namespaces"] = *annotation
		}
		if token {
			m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: "multikueue"}
		}
		return m
	}
	served := func(src CopySource) CopySource {
		src.ClusterExists, src.Served = ptr.To(true), ptr.To(true)
		return src
	}
	const missing = "Secret argocd/cluster1-multikueue does not exist"
	cases := map[string]struct {
		src  CopySource
		want string
	}{
		"a managed cluster's namespace": {src: CopySource{ClusterNamespace: true, ClusterExists: ptr.To(true), Served: ptr.To(false), MSA: msa(true, ptr.To("argocd"), true)},
			want: missing + ": namespace argocd is a managed cluster's namespace on the hub (label open-cluster-management.io/cluster-name), and the credential syncer copies no token into one. Consume from a namespace of your own, with a ManagedClusterSetBinding there."},
		"no such cluster": {src: CopySource{ClusterExists: ptr.To(false), Served: ptr.To(false)},
			want: missing + ": the hub has no ManagedCluster cluster1, so none of its tokens is copied anywhere; this profile was written by another writer, or is left over."},
		"not published here (opted out, unbound, not selected)": {src: CopySource{ClusterExists: ptr.To(true), Served: ptr.To(false), MSA: msa(true, ptr.To("argocd"), true)},
			want: missing + ": no Bound ManagedClusterSetBinding in argocd publishes cluster cluster1 (none selects it, none is Bound, or each is annotated clusterprofile.open-cluster-management.io/publish: \"false\"), so none of its tokens is copied here; this profile was written by another writer. Bind a set that holds cluster1 here, without the opt-out."},
		"may not read the ManagedServiceAccount": {src: served(CopySource{Err: apierrors.NewForbidden(schema.GroupResource{Resource: "managedserviceaccounts"}, "multikueue", errors.New("no"))}),
			want: missing + ", and you may not read ManagedServiceAccount cluster1/multikueue to tell why: run the doctor as someone who may get ManagedServiceAccounts in hub namespace cluster1."},
		"no ManagedServiceAccount": {src: served(CopySource{}),
			want: missing + ": there is no ManagedServiceAccount multikueue in hub namespace cluster1. Create it there, labelled authentication.open-cluster-management.io/sync-to-clusterprofile=true and annotated clusterprofile.open-cluster-management.io/consumer-namespaces: argocd."},
		"not labelled": {src: served(CopySource{MSA: msa(false, ptr.To("argocd"), true)}),
			want: missing + ": ManagedServiceAccount cluster1/multikueue is not labelled authentication.open-cluster-management.io/sync-to-clusterprofile=true, so its token is not synced. Label it."},
		"no token yet": {src: served(CopySource{MSA: msa(true, ptr.To("argocd"), false)}),
			want: missing + ": ManagedServiceAccount cluster1/multikueue has no token yet (no status.tokenSecretRef). Check its conditions and the managed-serviceaccount agent on cluster cluster1."},
		"scoped to another namespace (the demo's case)": {src: served(CopySource{MSA: msa(true, ptr.To("kueue-system"), true)}),
			want: missing + ": ManagedServiceAccount cluster1/multikueue sends its token only to kueue-system (annotation clusterprofile.open-cluster-management.io/consumer-namespaces). Add argocd to it."},
		"scoped to nothing": {src: served(CopySource{MSA: msa(true, ptr.To(""), true)}),
			want: missing + ": ManagedServiceAccount cluster1/multikueue sends its token only to no namespace (annotation clusterprofile.open-cluster-management.io/consumer-namespaces). Add argocd to it."},
		"unscoped, copied nowhere": {src: served(CopySource{MSA: msa(true, nil, true)}),
			want: missing + ": ManagedServiceAccount cluster1/multikueue names no consumer namespaces (annotation clusterprofile.open-cluster-management.io/consumer-namespaces), and such a token is copied only while the manager copies unscoped tokens everywhere (chart value credentialSyncer.unscopedTokens; nowhere copies it nowhere). Annotate it with clusterprofile.open-cluster-management.io/consumer-namespaces: argocd."},
		"everything asks for it: the syncer is off or yields": {src: served(CopySource{MSA: msa(true, ptr.To("kueue-system, argocd"), true)}),
			want: missing + ", though ManagedServiceAccount cluster1/multikueue asks for its token here and has one: the manager's credential syncer is off (chart gate clusterProfileCredSyncer) or yields to managed-serviceaccount's own syncer, which then writes the copies (Event YieldingToUpstream: kubectl get events -A --field-selector reason=YieldingToUpstream). Turn the gate on, or upstream's syncer off."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := missingCopyFix(tc.src, "cluster1", s); got != tc.want {
				t.Errorf("missingCopyFix:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
