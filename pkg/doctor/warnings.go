package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// Warnings are about the namespace as a whole: the unscoped token copies it
// holds, which every consumer here that may read Secrets can use, whoever
// they were meant for. Only metadata is read, and a caller who may not
// list Secrets gets no warning rather than an error: the rows are what
// they came for.
func (d *Doctor) Warnings(ctx context.Context) []string {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := d.Client.List(ctx, list, client.InNamespace(d.Settings.Namespace), client.HasLabels{cpcreds.LabelSyncedFrom}); err != nil {
		return nil
	}
	return UnscopedWarnings(d.Settings.Namespace, d.Settings.ManagedServiceAccount, list.Items)
}

// UnscopedWarnings is one warning per ManagedServiceAccount whose copies in
// namespace are marked unscoped (cpcreds.AnnotationUnscoped), the
// consumer's own (msa) and every other consumer's.
func UnscopedWarnings(namespace, msa string, copies []metav1.PartialObjectMetadata) []string {
	clustersOf := map[string][]string{}
	for i := range copies {
		annotations := copies[i].Annotations
		if annotations[cpcreds.AnnotationUnscoped] != "true" {
			continue
		}
		owner := annotations[cpcreds.AnnotationSourceManagedServiceAccount]
		clustersOf[owner] = append(clustersOf[owner], annotations[cpcreds.AnnotationSourceCluster])
	}
	owners := make([]string, 0, len(clustersOf))
	for owner := range clustersOf {
		owners = append(owners, owner)
	}
	sort.Strings(owners)
	warnings := make([]string, 0, len(owners))
	for _, owner := range owners {
		clusters := clustersOf[owner]
		sort.Strings(clusters)
		whose := "another consumer's"
		if owner == msa {
			whose = "your"
		}
		warnings = append(warnings, fmt.Sprintf("Namespace %s holds %s unscoped tokens of ManagedServiceAccount %s (clusters %s): it names no consumer namespaces, so the hub copies its token into every namespace that serves those clusters, and anyone who may read Secrets in any of them can act there with its rights. Set the annotation %s on the ManagedServiceAccount (in each cluster's hub namespace) to the namespaces that need it.",
			namespace, whose, owner, strings.Join(clusters, ", "), cpcreds.AnnotationConsumerNamespaces))
	}
	return warnings
}
