// Package clusterprofile is how every writer in this project writes
// ClusterProfiles: the Writer (plan with profilewrite, send under the
// writer's field manager, count, remember the write until the informer
// delivers it), the read-your-own-writes overlay over the informer cache,
// the event handler that skips the echoes of a writer's own writes, the
// shared name index, the detection of CRDs whose status lists are not
// list-maps, and the well-known labels.
package clusterprofile
