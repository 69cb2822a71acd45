package credsync

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

// copyStep is the work on one synced Secret; exactly one field is set.
type copyStep struct {
	// create makes a copy that does not exist yet. It is a create, not an
	// apply, so that a Secret of the same name that is not a synced copy
	// (which the copies cache does not hold) is never overwritten.
	create *corev1.Secret
	// apply brings an existing copy back in line (a new token, an expiry,
	// a hand edit).
	apply *corev1.Secret
	// releaseMarks, with apply, gives up the marks put on the copy while
	// this syncer yielded to managed-serviceaccount's (MarksFieldManager):
	// taking the copy over in place.
	releaseMarks bool
	// remove deletes a copy that is no longer wanted.
	remove *corev1.Secret
	// collision is a wanted copy whose name another pair's copy holds.
	collision *collision
}

type collision struct {
	want   *corev1.Secret
	holder *corev1.Secret
}

// planCopies compares the copies the namespace should hold for cluster with
// the synced copies it holds (inNamespace: every synced copy there, any
// cluster's) and returns the writes that close the gap, by Secret name.
// While yielding to managed-serviceaccount's own syncer it creates and
// changes nothing (that syncer writes the copies; see DesiredMarks), but it
// removes all the same: every copy of the cluster's tokens that is not
// wanted goes, this syncer's or that one's.
func planCopies(cluster string, desired []*corev1.Secret, inNamespace []*corev1.Secret, yielding bool) []copyStep {
	existing := make(map[string]*corev1.Secret, len(inNamespace))
	for _, s := range inNamespace {
		existing[s.Name] = s
	}
	wanted := make(map[string]bool, len(desired))
	var steps []copyStep
	for _, want := range desired {
		wanted[want.Name] = true
		if yielding {
			continue
		}
		current, ok := existing[want.Name]
		switch {
		case !ok:
			steps = append(steps, copyStep{create: want})
		case !sameSource(current, want):
			steps = append(steps, copyStep{collision: &collision{want: want, holder: current}})
		case !CopyUpToDate(current, want):
			_, marked := current.Annotations[cpcreds.AnnotationUpstreamCopy]
			steps = append(steps, copyStep{apply: want, releaseMarks: marked})
		}
	}
	for _, current := range inNamespace {
		if !wanted[current.Name] && copyOf(current, cluster) {
			steps = append(steps, copyStep{remove: current})
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].name() < steps[j].name() })
	return steps
}

func (s copyStep) name() string {
	switch {
	case s.create != nil:
		return s.create.Name
	case s.apply != nil:
		return s.apply.Name
	case s.remove != nil:
		return s.remove.Name
	default:
		return s.collision.want.Name
	}
}

// copyOf tells whether s holds a token of cluster: this syncer's copy (its
// marks name the cluster), or managed-serviceaccount's own syncer's (the
// synced-from label, owned by the cluster's profile, which is named after
// it). Only this manager and that syncer may write Secrets with the label
// (the chart's admission policies), so neither is a Secret a tenant made.
func copyOf(s *corev1.Secret, cluster string) bool {
	if c, _, ok := cpcreds.CopySource(s); ok {
		return c == cluster
	}
	_, labelled := s.Labels[LabelSyncedFrom]
	return labelled && slices.Contains(ownerProfiles(s), cluster)
}

// ownerProfiles are the names of the ClusterProfiles that own s.
func ownerProfiles(s *corev1.Secret) []string {
	var names []string
	for _, ref := range s.OwnerReferences {
		if ref.Kind == "ClusterProfile" && ref.APIVersion == cpv1alpha1.GroupVersion.String() {
			names = append(names, ref.Name)
		}
	}
	return names
}

// writtenByAnother tells whether s is a copy another syncer wrote:
// managed-serviceaccount's own, with none of this syncer's marks, or marked
// as its copy while this syncer yielded.
func writtenByAnother(s *corev1.Secret) bool {
	_, _, ours := cpcreds.CopySource(s)
	_, upstream := s.Annotations[cpcreds.AnnotationUpstreamCopy]
	return !ours || upstream
}

func sameSource(a, b *corev1.Secret) bool {
	ac, am, aok := cpcreds.CopySource(a)
	bc, bm, bok := cpcreds.CopySource(b)
	return aok && bok && ac == bc && am == bm
}

// copyAnnotations are the annotations the syncer writes on a copy.
var copyAnnotations = []string{cpcreds.AnnotationSourceCluster, cpcreds.AnnotationSourceManagedServiceAccount,
	cpcreds.AnnotationTokenExpiration, cpcreds.AnnotationPublishedServers, cpcreds.AnnotationUnscoped}

// CopyUpToDate tells whether current carries everything the syncer writes
// with want's values: token and CA, type, the synced-from label, the
// copyAnnotations, and the owner reference. Fields others added to the
// Secret are not the syncer's to judge.
func CopyUpToDate(current, want *corev1.Secret) bool {
	if current.Type != want.Type || current.Labels[LabelSyncedFrom] != want.Labels[LabelSyncedFrom] {
		return false
	}
	if !secretdigest.SameValue(current, want, cpcreds.SecretKeyToken) || !secretdigest.SameValue(current, want, cpcreds.SecretKeyCA) {
		return false
	}
	if _, marked := current.Annotations[cpcreds.AnnotationUpstreamCopy]; marked {
		return false // taken over from the upstream syncer: see releaseMarks
	}
	for _, key := range copyAnnotations {
		got, has := current.Annotations[key]
		expected, wants := want.Annotations[key]
		if has != wants || got != expected {
			return false
		}
	}
	for _, ref := range current.OwnerReferences {
		if ref.UID == want.OwnerReferences[0].UID {
			return true
		}
	}
	return false
}
