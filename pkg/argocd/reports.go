package argocd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
)

const (
	topicNameTaken = "taken"
	topicNoEntry   = "entry"
)

// report tells, once per change (log line, Event on the profile), that a
// Secret we did not write holds the cluster Secret's name, or that the
// profile is published but its access provider has no entry for it.
func (r *Reconciler) report(ctx context.Context, req ctrl.Request, profile *cpv1alpha1.ClusterProfile, noEntry bool, act action) {
	findings := map[string]string{}
	if act == actionClash {
		findings[topicNameTaken] = SecretName(req.Name)
	}
	if noEntry {
		findings[topicNoEntry] = r.settings.AccessProvider
	}
	for _, topic := range r.reports.Update(req.String(), findings) {
		log := ctrl.LoggerFrom(ctx)
		switch topic {
		case topicNameTaken:
			log.Info("Not writing an Argo CD cluster Secret: a Secret we did not write holds its name", "secret", SecretName(req.Name))
			r.event(profile, ReasonNameTaken, fmt.Sprintf(
				"Secret %s/%s exists and was not written for this ClusterProfile; leaving it alone (delete it to let Argo CD reach this cluster through the profile).",
				req.Namespace, SecretName(req.Name)))
		case topicNoEntry:
			log.Info("Not writing an Argo CD cluster Secret: the access provider publishes no entry for the profile", "entry", r.settings.AccessProvider)
			r.event(profile, ReasonNoEntry, fmt.Sprintf(
				"The access provider %q publishes no entry for this cluster (its gate is off, or it waits for what it needs), so Argo CD gets no cluster Secret for it.",
				r.settings.AccessProvider))
		}
	}
}

func (r *Reconciler) event(profile *cpv1alpha1.ClusterProfile, reason, note string) {
	if r.recorder != nil && profile != nil {
		r.recorder.Eventf(profile, nil, corev1.EventTypeWarning, reason, actionArgoCD, "%s", note)
	}
}
