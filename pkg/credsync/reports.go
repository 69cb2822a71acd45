package credsync

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// reportCollisions reports each name collision once (log line, Event on the
// ManagedServiceAccount whose token could not be copied, metric); it is
// reported again only if it goes away and comes back.
func (r *Reconciler) reportCollisions(ctx context.Context, subject string, sources []Source, steps []copyStep, findings map[string]string) {
	fresh := r.reports.Update(subject, findings)
	if len(fresh) == 0 {
		return
	}
	wanted := map[string]*corev1.Secret{}
	for _, s := range steps {
		switch {
		case s.collision != nil:
			wanted[s.name()] = s.collision.want
		case s.create != nil:
			wanted[s.name()] = s.create
		}
	}
	for _, name := range fresh {
		want := wanted[name]
		msaName := want.Annotations[cpcreds.AnnotationSourceManagedServiceAccount]
		metrics.SyncedSecretCollision()
		ctrl.LoggerFrom(ctx).Info("Not syncing a token: another Secret holds its name; rename the ManagedServiceAccount",
			"secret", klog.KRef(want.Namespace, name), "heldBy", findings[name], "managedServiceAccount", msaName)
		for _, s := range sources {
			if s.MSA.Name == msaName && r.recorder != nil {
				r.recorder.Eventf(s.MSA, nil, corev1.EventTypeWarning, ReasonNameCollision, "Sync",
					"Not copying the token to %s/%s: that name holds %s. Rename this ManagedServiceAccount.",
					want.Namespace, name, findings[name])
			}
		}
	}
}
