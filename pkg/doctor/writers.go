package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

// writerNotes say which of the profile, the entry and the copy this bundle
// did not write itself: what an upstream twin (OCM's mirror,
// cluster-proxy's or managed-serviceaccount's own writer) wrote while the
// bundle yields to it. Field managers are whatever a writer called itself;
// the notes explain, they decide nothing.
func writerNotes(p *cpv1alpha1.ClusterProfile, entry *cpv1alpha1.AccessProvider, copy *corev1.Secret) []string {
	var notes []string
	if len(p.ManagedFields) > 0 && !fieldmanager.WrittenBy(p, clusterprofile.MirrorFieldManager) {
		notes = append(notes, fmt.Sprintf("The profile was published by another mirror (%s), such as OCM's own while this bundle's mirror stays passive.",
			managers(p)))
	}
	if entry != nil && entry.Name == accessprovider.ProxyEntryName && len(p.ManagedFields) > 0 {
		writers := profilewrite.EntryServerWriters(p, entry.Name)
		if !slices.Contains(writers, accessprovider.ProxyFieldManager) {
			notes = append(notes, fmt.Sprintf("The entry %q was written by another writer (%s), such as cluster-proxy's own while this bundle's access provider yields to it.",
				entry.Name, orNone(strings.Join(writers, ", "))))
		}
	}
	return append(notes, copyNotes(copy)...)
}

// copyNotes say which syncer wrote the copy, when it is not this bundle's:
// managed-serviceaccount's own, vouched for (the bundle yields to it) or not
// (the copy is one the bundle's rules do not allow here).
func copyNotes(copy *corev1.Secret) []string {
	if copy == nil {
		return nil
	}
	if copy.Annotations[cpcreds.AnnotationUpstreamCopy] == "true" {
		return []string{fmt.Sprintf("Secret %s/%s was written by managed-serviceaccount's own syncer; this bundle's syncer yields to it and vouched for the copy.",
			copy.Namespace, copy.Name)}
	}
	if _, _, ours := cpcreds.CopySource(copy); ours || copy.Labels[cpcreds.LabelSyncedFrom] == "" {
		return nil
	}
	return []string{fmt.Sprintf("Secret %s/%s was written by another syncer, such as managed-serviceaccount's own, where this bundle's rules allow no copy "+
		"(the namespace does not serve the cluster, or the ManagedServiceAccount does not send its token here): the manager deletes it, and that syncer "+
		"writes it again on its next reconcile of this profile while it is on. The hub's admins turn it off (its chart's featureGates.clusterProfile, "+
		"or clusterProfileCredSyncer; docs/install.md, \"Coexistence with upstream's writers\").", copy.Namespace, copy.Name)}
}

// managers lists the field managers of p, sorted.
func managers(p *cpv1alpha1.ClusterProfile) string {
	names := sets.New[string]()
	for _, e := range p.ManagedFields {
		names.Insert(e.Manager)
	}
	return strings.Join(sets.List(names), ", ")
}

// ActiveMirror says which mirror publishes the profiles (see MirrorNote).
// A caller who may not list ClusterManagers, or a hub set up without OCM's
// operator, gets "": the rows are what they came for.
func (d *Doctor) ActiveMirror(ctx context.Context) string {
	list := &operatorv1.ClusterManagerList{}
	if err := d.Client.List(ctx, list); err != nil {
		return ""
	}
	return MirrorNote(list.Items)
}

// MirrorNote names the mirror that publishes profiles: OCM's built-in one
// while a ClusterManager turns its ClusterProfile gate on (this bundle's
// stays passive then), else this bundle's.
func MirrorNote(managers []operatorv1.ClusterManager) string {
	for i := range managers {
		if coexistence.EnablesBuiltInMirror(&managers[i]) {
			return fmt.Sprintf("OCM's built-in mirror publishes the profiles (ClusterManager %s turns its %s gate on); this bundle's mirror stays passive.",
				managers[i].Name, coexistence.BuiltInGate)
		}
	}
	return "this bundle's mirror publishes the profiles (no ClusterManager turns OCM's built-in one on)."
}
