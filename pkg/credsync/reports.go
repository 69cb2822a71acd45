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

// reportInvalidNames reports once each ManagedServiceAccount of cluster whose
// copies cannot be named (log line, Event on it). The name is the same in
// every namespace, so the report is per cluster, not per namespace; it is
// made again only after the problem went away and came back.
func (r *Reconciler) reportInvalidNames(ctx context.Context, cluster string, sources []Source) {
	invalid := InvalidCopyNames(cluster, sources)
	for _, msaName := range r.reports.Update(invalidNamesSubject(cluster), invalid) {
		ctrl.LoggerFrom(ctx).Info("Not syncing a token: its copy would have no valid Secret name; shorten the ManagedServiceAccount's name",
			"managedServiceAccount", klog.KRef(cluster, msaName), "problem", invalid[msaName])
		for _, s := range sources {
			if s.MSA.Name == msaName && r.recorder != nil {
				r.recorder.Eventf(s.MSA, nil, corev1.EventTypeWarning, ReasonNameInvalid, "Sync",
					"Not copying the token next to the ClusterProfiles of %s: %s. Shorten this ManagedServiceAccount's name.",
					cluster, invalid[msaName])
			}
		}
	}
}

// invalidNamesSubject keys the report of a cluster's unnameable copies
// apart from the collision reports, keyed "<namespace>/<cluster>": no
// namespace name holds a ":".
func invalidNamesSubject(cluster string) string { return "invalid-name:" + cluster }
