package profilewrite

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// MergeStatus is the write for ClusterProfile CRDs whose status lists are
// atomic (no list-map markers), where a Server-Side Apply of a list would
// replace it whole and drop other writers' entries. It returns current with
// the writer's own entries replaced by want's: entries whose key is in owned
// are dropped, want's entries are put in place of (or after) them, and every
// other entry keeps its place. The caller writes the result with an
// optimistic lock, so a concurrent writer is never overwritten blindly.
func MergeStatus(current cpv1alpha1.ClusterProfileStatus, want StatusApply, owned Ownership) cpv1alpha1.ClusterProfileStatus {
	out := *current.DeepCopy()
	if owned.Version {
		out.Version.Kubernetes = want.Version
	}
	out.Conditions = mergeByKey(out.Conditions, want.Conditions,
		func(c metav1.Condition) string { return c.Type }, owned.Conditions.Has)
	out.Properties = mergeByKey(out.Properties, want.Properties,
		func(p cpv1alpha1.Property) string { return p.Name }, owned.Properties.Has)
	out.AccessProviders = mergeByKey(out.AccessProviders, want.AccessProviders,
		func(p cpv1alpha1.AccessProvider) string { return p.Name }, owned.AccessProviders.Has)
	return out
}

func mergeByKey[T any](current, want []T, key func(T) string, owned func(string) bool) []T {
	wanted := make(map[string]T, len(want))
	for _, w := range want {
		wanted[key(w)] = w
	}
	out := make([]T, 0, len(current)+len(want))
	placed := make(map[string]bool, len(want))
	for _, c := range current {
		k := key(c)
		if w, ok := wanted[k]; ok {
			if !placed[k] {
				out = append(out, w)
				placed[k] = true
			}
			continue
		}
		if !owned(k) {
			out = append(out, c)
		}
	}
	for _, w := range want {
		if !placed[key(w)] {
			out = append(out, w)
			placed[key(w)] = true
		}
	}
	if len(out) == 0 && current == nil {
		return nil
	}
	return out
}
