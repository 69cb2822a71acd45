package credsync

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
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

// reportScopes reports once each of cluster's ManagedServiceAccounts whose
// consumer namespaces list names something that is no namespace, and, while
// unscoped tokens go everywhere, each that names none, with where its token
// goes (log line, Event on it). A report is made again when what it says
// changes: another bad entry, another set of namespaces.
func (r *Reconciler) reportScopes(ctx context.Context, cluster string, sources []Source) {
	invalid, unscoped := map[string]string{}, map[string]string{}
	for _, s := range sources {
		scope := ScopeOf(s.MSA)
		switch {
		case len(scope.Invalid) > 0:
			invalid[s.MSA.Name] = strings.Join(scope.Invalid, ", ")
		case !scope.Scoped && r.unscoped != UnscopedNowhere:
			unscoped[s.MSA.Name] = ""
		}
	}
	byName := func(name string) *authv1beta1.ManagedServiceAccount {
		for _, s := range sources {
			if s.MSA.Name == name {
				return s.MSA
			}
		}
		return nil
	}
	for _, name := range r.reports.Update("invalid-scope:"+cluster, invalid) {
		ctrl.LoggerFrom(ctx).Info("Ignoring entries of a ManagedServiceAccount's consumer namespaces that name no namespace",
			"managedServiceAccount", klog.KRef(cluster, name), "entries", invalid[name])
		r.event(byName(name), ReasonConsumerNamespacesInvalid,
			"Ignoring %s in the annotation %s: not namespace names (no wildcards); list the consumer namespaces by name, comma-separated.",
			invalid[name], cpcreds.AnnotationConsumerNamespaces)
	}
	if len(unscoped) > 0 {
		namespaces, err := r.servedNamespaces(ctx, cluster)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Not reporting unscoped tokens: reading where the cluster is published")
			return
		}
		for name := range unscoped {
			unscoped[name] = strings.Join(namespaces, ", ")
		}
	}
	for _, name := range r.reports.Update("unscoped:"+cluster, unscoped) {
		ctrl.LoggerFrom(ctx).Info("Copying an unscoped token into every namespace that serves its cluster",
			"managedServiceAccount", klog.KRef(cluster, name), "namespaces", unscoped[name])
		r.event(byName(name), ReasonUnscopedToken,
			"This ManagedServiceAccount names no consumer namespaces, so its token is copied into every namespace that serves cluster %s (now: %s) and any consumer there can use it. Set the annotation %s to the namespaces that need it.",
			cluster, orNone(unscoped[name]), cpcreds.AnnotationConsumerNamespaces)
	}
}

// servedNamespaces are the namespaces that serve cluster, sorted.
func (r *Reconciler) servedNamespaces(ctx context.Context, cluster string) ([]string, error) {
	mc, err := r.members.Cluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	world, err := r.members.ClusterPublishing(ctx, mc, nil)
	if err != nil {
		return nil, err
	}
	return sets.List(sets.KeySet(membership.Served(mc, world))), nil
}

func (r *Reconciler) event(msa *authv1beta1.ManagedServiceAccount, reason, format string, args ...any) {
	if msa != nil && r.recorder != nil {
		r.recorder.Eventf(msa, nil, corev1.EventTypeWarning, reason, "Sync", format, args...)
	}
}

func orNone(list string) string {
	if list == "" {
		return "none"
	}
	return list
}
