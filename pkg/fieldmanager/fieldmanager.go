// Package fieldmanager is the contract every writer of this project keeps
// with the others about field managers: each writes under its own name,
// built from Prefix, and finds what it left behind by that name alone
// (WrittenBy). It imports nothing of the project, so that a capability that
// writes no ClusterProfile (the syncer's copies, MultiKueue's clusters, Argo
// CD's Secrets) need not import the ClusterProfile write engine for it.
package fieldmanager

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Prefix starts the field manager of every writer in this project
// (clusterprofile-mirror, clusterprofile-access-proxy, ...): the cache
// keeps the managedFields entries of those managers alone (see
// clusterprofile.Compact), and an Update entry of any of them on a
// profile's status tells that this project merged it while the status
// lists were atomic (see profilewrite's mergedBeforeSwitch).
const Prefix = "clusterprofile-"

// WrittenBy tells whether manager has a managedFields entry on obj, for any
// subresource or, when given, for one of subresources ("" is the main
// resource). It finds what a writer left behind, to clean up only its own.
func WrittenBy(obj metav1.Object, manager string, subresources ...string) bool {
	for _, entry := range obj.GetManagedFields() {
		if entry.Manager == manager && (len(subresources) == 0 || slices.Contains(subresources, entry.Subresource)) {
			return true
		}
	}
	return false
}
