package mirror

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

const (
	topicSkippedClaims = "claims"
	topicOmittedLabels = "labels"
	topicIDConflict    = "id"
	topicClashPrefix   = "clash/"

	topicClusterNamespace = "cluster-namespace"
)

// reportFindings reports skipped claims, omitted labels, a refused cluster
// id and name clashes when they first appear.
func (r *Reconciler) reportFindings(ctx context.Context, cluster *clusterv1.ManagedCluster, clusterName string, desired Desired, steps []step) {
	findings := map[string]string{}
	if len(desired.SkippedClaims) > 0 {
		described := make([]string, 0, len(desired.SkippedClaims))
		for _, s := range desired.SkippedClaims {
			described = append(described, s.String())
		}
		findings[topicSkippedClaims] = strings.Join(described, ", ")
	}
	if omitted := OmittedLabels(clusterName, desired); len(omitted) > 0 {
		findings[topicOmittedLabels] = strings.Join(omitted, "; ")
	}
	if desired.ID.Conflict != nil {
		findings[topicIDConflict] = desired.ID.Conflict.String()
	}
	clashes := map[string]step{}
	for _, s := range steps {
		if s.clashWith != "" {
			findings[topicClashPrefix+s.key.Namespace] = s.clashWith
			clashes[topicClashPrefix+s.key.Namespace] = s
		}
	}
	log := ctrl.LoggerFrom(ctx)
	for _, topic := range r.reports.Update(clusterName, findings) {
		switch topic {
		case topicSkippedClaims:
			metrics.ClaimsSkipped(len(desired.SkippedClaims))
			log.Info("Skipping cluster claims the ClusterProfile schema would reject; the rest of the status is written", "claims", findings[topic])
			r.event(cluster, nil, corev1.EventTypeWarning, ReasonClaimsSkipped,
				"Claims left out of ClusterProfile properties: %s", findings[topic])
			continue
		case topicOmittedLabels:
			log.Info("Publishing ClusterProfiles without labels whose values are no valid label values", "labels", findings[topic])
			r.event(cluster, nil, corev1.EventTypeWarning, ReasonLabelsOmitted,
				"Labels left off ClusterProfiles: %s", findings[topic])
			continue
		case topicIDConflict:
			log.Info("Publishing no cluster id: the one this cluster asks for is held by another ManagedCluster",
				"id", desired.ID.Conflict.ID, "holder", desired.ID.Conflict.Holder, "holdsItsName", desired.ID.Conflict.ByName)
			r.event(cluster, nil, corev1.EventTypeWarning, ReasonClusterIDConflict, "%s", findings[topic])
			continue
		}
		s := clashes[topic]
		metrics.NameClash()
		log.Info("Not publishing ClusterProfile: another cluster manager's profile has its name",
			"clusterProfile", klog.KRef(s.key.Namespace, s.key.Name), "otherManager", s.clashWith)
		r.event(cluster, s.current, corev1.EventTypeWarning, ReasonNameClash,
			"ClusterProfile %s/%s belongs to cluster manager %q; not publishing this cluster in namespace %s until it is gone",
			s.key.Namespace, s.key.Name, s.clashWith, s.key.Namespace)
	}
}

// reportClusterNamespaces warns, once per binding, about each publishing
// binding of the world in a ManagedCluster's namespace: membership publishes
// nothing there, and whoever made the binding should learn why. The finding
// depends on the binding and its namespace alone, so every cluster the
// binding would publish agrees on it and it is reported once; a binding that
// stops publishing, or whose namespace loses the label, clears it.
func (r *Reconciler) reportClusterNamespaces(ctx context.Context, world World) {
	inClusterNamespaces := map[*clusterv1beta2.ManagedClusterSetBinding]bool{}
	for _, b := range membership.BindingsInClusterNamespaces(world.Publishing) {
		inClusterNamespaces[b] = true
	}
	for i := range world.Bindings {
		binding := &world.Bindings[i]
		var findings map[string]string
		if inClusterNamespaces[binding] {
			findings = map[string]string{topicClusterNamespace: binding.Namespace}
		}
		// By UID: a binding made anew is told anew.
		subject := "ManagedClusterSetBinding/" + binding.Namespace + "/" + binding.Name + "/" + string(binding.UID)
		if len(r.reports.Update(subject, findings)) == 0 {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Not publishing through a binding in a ManagedCluster's namespace",
			"managedClusterSetBinding", klog.KObj(binding))
		r.event(binding, nil, corev1.EventTypeWarning, ReasonClusterNamespaceNotPublished,
			"Namespace %s is a ManagedCluster's namespace (label %s), where that cluster's agents hold rights: "+
				"no ClusterProfile, access provider entry or token copy is published through this binding; it still serves Placement",
			binding.Namespace, membership.LabelClusterNamespace)
	}
}

// reportWriteFailure turns errors that need a person (invalid content,
// missing permissions) into Events; transient errors are only retried.
func (r *Reconciler) reportWriteFailure(cluster *clusterv1.ManagedCluster, key types.NamespacedName, current *cpv1alpha1.ClusterProfile, err error) {
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) {
		return
	}
	var regarding runtime.Object
	switch {
	case cluster != nil:
		regarding = cluster
	case current != nil:
		regarding = current
	default:
		return
	}
	r.event(regarding, nil, corev1.EventTypeWarning, ReasonWriteFailed, "Writing ClusterProfile %s: %v", key, err)
}

func (r *Reconciler) event(regarding, related runtime.Object, eventType, reason, note string, args ...any) {
	if r.recorder != nil {
		r.recorder.Eventf(regarding, related, eventType, reason, actionMirror, note, args...)
	}
}

// reportHeldFacts counts and logs changed facts the write budget holds back;
// the requeue publishes them when it allows.
func (r *Reconciler) reportHeldFacts(ctx context.Context, desired Desired, p planned) {
	if p.factsHeldFor == 0 {
		return
	}
	metrics.FactsHeld(strings.ToLower(p.factsHeld.String()))
	ctrl.LoggerFrom(ctx).V(4).Info("Changed facts held back by the write budget", "change", p.factsHeld.String(),
		"wait", p.factsHeldFor.String(), "profiles", len(desired.SetByNamespace))
}
