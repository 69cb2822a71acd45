package doctor

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
)

// checkProfile: the profile says it is the bundle's (manager label and
// spec, cluster-name label) and carries what the mirror publishes once the
// cluster reports: a version and a healthy control plane. The marks are
// claims anyone allowed to create a profile can copy (SPEC §9); the doctor
// reads them to explain, never to decide membership.
func checkProfile(p *cpv1alpha1.ClusterProfile, manager string) []string {
	var fixes []string
	if got := p.Labels[clusterprofile.LabelClusterManager]; got != manager || p.Spec.ClusterManager.Name != manager {
		fixes = append(fixes, fmt.Sprintf("The profile belongs to cluster manager %q (label %s=%q), not %q: it was not published by this bundle, so use the profile the mirror publishes or pass --cluster-manager.",
			p.Spec.ClusterManager.Name, clusterprofile.LabelClusterManager, got, manager))
	}
	fixes = append(fixes, checkClusterNameLabel(p)...)
	if p.Status.Version.Kubernetes == "" {
		fixes = append(fixes, fmt.Sprintf("status.version.kubernetes is empty: ManagedCluster %s has not reported its version yet; check that its klusterlet is running and joined.", p.Name))
	}
	return append(fixes, checkHealthy(p)...)
}

// checkClusterNameLabel: the mirror labels a profile with its cluster's
// name, unless the name is no valid label value (clusterprofile.ClusterNameLabel).
func checkClusterNameLabel(p *cpv1alpha1.ClusterProfile) []string {
	got, labelled := p.Labels[clusterprofile.LabelClusterName]
	want, wanted := clusterprofile.ClusterNameLabel(p.Name)
	switch {
	case wanted && got != want:
		return []string{fmt.Sprintf("The label %s is %q, not the profile's name %q: the mirror writes it; delete the profile and let the mirror recreate it.",
			clusterprofile.LabelClusterName, got, p.Name)}
	case !wanted && labelled:
		return []string{fmt.Sprintf("The label %s is %q, but the profile's name is no valid label value, so the mirror leaves the label off: the profile was not published by this bundle; delete it and let the mirror recreate it.",
			clusterprofile.LabelClusterName, got)}
	}
	return nil
}

func checkHealthy(p *cpv1alpha1.ClusterProfile) []string {
	c := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
	switch {
	case c == nil:
		return []string{fmt.Sprintf("The profile has no %s condition: ManagedCluster %s has no Available condition yet; check that its klusterlet is running and joined.",
			cpv1alpha1.ClusterConditionControlPlaneHealthy, p.Name)}
	case c.Status != metav1.ConditionTrue:
		return []string{fmt.Sprintf("%s is %s (%s: %s): the cluster's control plane is not healthy; look at ManagedCluster %s and its klusterlet.",
			c.Type, c.Status, c.Reason, c.Message, p.Name)}
	}
	return nil
}

// agentNotes: a profile whose ControlPlaneHealthy is the klusterlet's
// because the bundle's agent on that cluster reports nothing. It is a note,
// not a fix: consumers still connect; the hub's admins should look at the
// agent.
func agentNotes(p *cpv1alpha1.ClusterProfile) []string {
	c := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
	if c == nil || c.Reason != mirror.ReasonNoFreshAgentReport {
		return nil
	}
	return []string{fmt.Sprintf("%s is the klusterlet's view: %s on cluster %s reports nothing; the hub's admins can check its ManagedClusterAddOn in namespace %s (docs/operations.md, \"A cluster's agent reports nothing\").",
		c.Type, agentapi.AddonName, p.Name, p.Name)}
}

// idNotes: a profile the mirror published without a cluster id, because
// the id its cluster asks for is held by another cluster (the mirror then
// still names the set). A note, not a fix: consumers that address clusters
// by profile name still connect. It names no holder: that cluster may not
// be published in this namespace.
func idNotes(p *cpv1alpha1.ClusterProfile) []string {
	if hasProperty(p, mirror.PropertyClusterID) || !hasProperty(p, mirror.PropertyClusterSet) {
		return nil
	}
	return []string{fmt.Sprintf("The profile carries no %s (the KEP-2149 cluster id): the id cluster %s asks for (its name, or its %s claim) "+
		"is held by another cluster that published it first, and ids stay with their holder; consumers that key clusters by that id do not "+
		"see this one until the holder releases it. The hub's admins find the holder in the %s Event on ManagedCluster %s "+
		"(docs/security.md, \"Cluster ids\").", mirror.PropertyClusterID, p.Name, mirror.PropertyClaimID, mirror.ReasonClusterIDConflict, p.Name)}
}

func hasProperty(p *cpv1alpha1.ClusterProfile, name string) bool {
	return slices.ContainsFunc(p.Status.Properties, func(prop cpv1alpha1.Property) bool { return prop.Name == name })
}

func noProfilesFix(namespace string) string {
	return fmt.Sprintf("There is no ClusterProfile in namespace %s: profiles appear only where a ManagedClusterSetBinding is Bound to a set that contains clusters; check `kubectl get managedclustersetbindings -n %s` (condition Bound True) and that the ClusterProfile gate is on.",
		namespace, namespace)
}
