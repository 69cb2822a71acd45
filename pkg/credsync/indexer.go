package credsync

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// IndexCopyOf indexes the copies cache by the cluster whose token a copy
// holds, so a reconcile reads only that cluster's copies. By cluster rather
// than by the queue key (namespace and cluster): an index keeps a set per
// key, and a set per copy would cost more than the copy itself.
const IndexCopyOf = "copyOf"

// IndexCopy is the IndexCopyOf function: the cluster a copy's marks name,
// or, for a copy without them (managed-serviceaccount's own syncer's), the
// profiles that own it, each named after its cluster.
func IndexCopy(obj client.Object) []string {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	if cluster, _, ok := cpcreds.CopySource(secret); ok {
		return []string{cluster}
	}
	return ownerProfiles(secret)
}
