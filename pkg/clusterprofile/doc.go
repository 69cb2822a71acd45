// Package clusterprofile holds what every writer of ClusterProfiles in this
// project shares: the well-known labels, Server-Side Apply payloads that carry
// only the fields a writer owns, the no-op check that keeps an unchanged world
// at zero writes, a read-your-own-writes overlay over the informer cache, and
// the detection of ClusterProfile CRDs whose status lists are not list-maps.
package clusterprofile
