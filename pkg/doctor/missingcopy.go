package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// CopySource is what the doctor reads on the hub, the way the credential
// syncer reads it, to tell why a token copy is missing.
type CopySource struct {
	// MSA is the consumer's ManagedServiceAccount in the cluster's
	// namespace; nil when it does not exist or could not be read (Err).
	MSA *authv1beta1.ManagedServiceAccount
	Err error
	// ClusterNamespace: the consumer's namespace is a managed cluster's.
	ClusterNamespace bool
	// ClusterExists tells whether the hub has the ManagedCluster; nil when
	// the caller may not read it.
	ClusterExists *bool
	// Served tells whether a Bound, publishing binding in the consumer's
	// namespace selects the cluster; nil when the caller may not read that.
	Served *bool
}

// readCopySource reads what missingCopyFix needs. What the caller may not
// read stays unknown.
func (d *Doctor) readCopySource(ctx context.Context, cluster string) CopySource {
	src := CopySource{MSA: &authv1beta1.ManagedServiceAccount{}}
	key := types.NamespacedName{Namespace: cluster, Name: d.Settings.ManagedServiceAccount}
	if err := d.Client.Get(ctx, key, src.MSA); err != nil {
		src.MSA = nil
		if !apierrors.IsNotFound(err) {
			src.Err = err
		}
	}
	members := membership.Reader{Client: d.Client}
	if state, err := members.NamespaceState(ctx, d.Settings.Namespace); err == nil {
		src.ClusterNamespace = state == membership.NamespaceOfCluster
	}
	if managed, err := members.Cluster(ctx, cluster); err == nil {
		src.ClusterExists = ptr.To(managed != nil)
	}
	if served, err := members.Serves(ctx, d.Settings.Namespace, cluster); err == nil {
		src.Served = &served
	}
	return src
}

// missingCopyFix names the one reason the credential syncer has for not
// copying the token of ManagedServiceAccount <cluster>/<msa> into the
// consumer's namespace, in the order the syncer decides, and its fix.
func missingCopyFix(src CopySource, cluster string, s Settings) string {
	ns, msa := s.Namespace, s.ManagedServiceAccount
	missing := fmt.Sprintf("Secret %s/%s does not exist", ns, cpcreds.SecretName(cluster, msa))
	ref := cluster + "/" + msa
	switch {
	case src.ClusterNamespace:
		return fmt.Sprintf("%s: namespace %s is a managed cluster's namespace on the hub (label %s), and the credential syncer copies no token into one. Consume from a namespace of your own, with a ManagedClusterSetBinding there.",
			missing, ns, membership.LabelClusterNamespace)
	case src.ClusterExists != nil && !*src.ClusterExists:
		return fmt.Sprintf("%s: the hub has no ManagedCluster %s, so none of its tokens is copied anywhere; this profile was written by another writer, or is left over.",
			missing, cluster)
	case src.Served != nil && !*src.Served:
		return fmt.Sprintf("%s: no Bound ManagedClusterSetBinding in %s publishes cluster %s (none selects it, none is Bound, or each is annotated %s: \"false\"), so none of its tokens is copied here; this profile was written by another writer. Bind a set that holds %s here, without the opt-out.",
			missing, ns, cluster, membership.AnnotationPublish, cluster)
	case apierrors.IsForbidden(src.Err):
		return fmt.Sprintf("%s, and you may not read ManagedServiceAccount %s to tell why: run the doctor as someone who may get ManagedServiceAccounts in hub namespace %s.", missing, ref, cluster)
	case src.Err != nil:
		return fmt.Sprintf("%s, and reading ManagedServiceAccount %s failed (%v): retry, or check the hub's API server.", missing, ref, src.Err)
	case src.MSA == nil:
		return fmt.Sprintf("%s: there is no ManagedServiceAccount %s in hub namespace %s. Create it there, labelled %s=true and annotated %s: %s.",
			missing, msa, cluster, cpcreds.LabelSyncToClusterProfile, cpcreds.AnnotationConsumerNamespaces, ns)
	case src.MSA.Labels[cpcreds.LabelSyncToClusterProfile] != "true":
		return fmt.Sprintf("%s: ManagedServiceAccount %s is not labelled %s=true, so its token is not synced. Label it.",
			missing, ref, cpcreds.LabelSyncToClusterProfile)
	case src.MSA.Status.TokenSecretRef == nil:
		return fmt.Sprintf("%s: ManagedServiceAccount %s has no token yet (no status.tokenSecretRef). Check its conditions and the managed-serviceaccount agent on cluster %s.",
			missing, ref, cluster)
	}
	if problem := credsync.InvalidCopyNames(cluster, []credsync.Source{{MSA: src.MSA}})[msa]; problem != "" {
		return fmt.Sprintf("%s and cannot: %s. Give the ManagedServiceAccount a shorter name.", missing, problem)
	}
	scope := credsync.ScopeOf(src.MSA)
	switch {
	case scope.Scoped && !scope.Namespaces.Has(ns):
		return fmt.Sprintf("%s: ManagedServiceAccount %s sends its token only to %s (annotation %s). Add %s to it.",
			missing, ref, namespaceList(scope.Namespaces.UnsortedList()), cpcreds.AnnotationConsumerNamespaces, ns)
	case !scope.Scoped:
		return fmt.Sprintf("%s: ManagedServiceAccount %s names no consumer namespaces (annotation %s), and such a token is copied only while the manager copies unscoped tokens everywhere (chart value credentialSyncer.unscopedTokens; nowhere copies it nowhere). Annotate it with %s: %s.",
			missing, ref, cpcreds.AnnotationConsumerNamespaces, cpcreds.AnnotationConsumerNamespaces, ns)
	}
	return fmt.Sprintf("%s, though ManagedServiceAccount %s asks for its token here and has one: the manager's credential syncer is off (chart gate clusterProfileCredSyncer) or yields to managed-serviceaccount's own syncer, which then writes the copies (Event YieldingToUpstream: kubectl get events -A --field-selector reason=YieldingToUpstream). Turn the gate on, or upstream's syncer off.",
		missing, ref)
}

func namespaceList(names []string) string {
	if len(names) == 0 {
		return "no namespace"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
