package argocd

import (
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

// action is what one profile's cluster Secret needs.
type action int

const (
	actionNone   action = iota
	actionCreate        // no Secret holds the name
	actionApply         // ours, not as wanted
	actionDelete        // ours, no longer wanted
	actionClash         // a Secret we did not write holds the name: never touched
)

func (a action) String() string {
	return [...]string{"none", "create", "apply", "delete", "clash"}[a]
}

// plan compares our Secret of the name (current, from the cache of the
// Secrets labelled ours; nil: none), whether any other Secret holds the
// name (taken), and what is wanted (desired; nil: nothing). The label alone
// tells ours here; the write path checks the field manager before it
// changes or deletes anything.
func plan(current *corev1.Secret, taken bool, desired *corev1.Secret) action {
	switch {
	case current != nil && !current.DeletionTimestamp.IsZero():
		return actionNone // its delete event brings us back
	case desired == nil && current != nil:
		return actionDelete
	case desired == nil:
		return actionNone
	case current == nil && taken:
		return actionClash
	case current == nil:
		return actionCreate
	case !upToDate(current, desired):
		return actionApply
	}
	return actionNone
}

// upToDate tells whether current carries what desired says: type, labels,
// data (current from the cache holds digests of it: secretdigest) and the
// owner reference to the profile.
func upToDate(current, desired *corev1.Secret) bool {
	if current.Type != desired.Type || !maps.Equal(current.Labels, desired.Labels) || !secretdigest.SameData(current, desired) {
		return false
	}
	for _, ref := range current.OwnerReferences {
		if ref.UID == desired.OwnerReferences[0].UID {
			return true
		}
	}
	return false
}

// awaitProperties is how long a new profile's cluster Secret waits before
// it is created: until the profile carries the standard clusterset
// property, for at most statusSettle from the profile's creation. The
// mirror writes the standard properties, which become the Secret's labels,
// in a later request than the create: in the status, once the cluster's id
// is recorded, which in a cold start can come tens of seconds later (its
// first status write may carry the claims' properties without them).
// Created before them, the Secret would be written a second time. 0: create
// now.
func awaitProperties(profile *cpv1alpha1.ClusterProfile, now time.Time) time.Duration {
	if slices.ContainsFunc(profile.Status.Properties, func(p cpv1alpha1.Property) bool { return p.Name == clusterprofile.PropertyClusterSet }) {
		return 0
	}
	return min(max(profile.CreationTimestamp.Add(statusSettle).Sub(now), 0), statusSettle)
}
