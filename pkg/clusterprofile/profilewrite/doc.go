// Package profilewrite decides, without any I/O, how one writer of
// ClusterProfiles brings a profile to what it wants: the Server-Side Apply
// payloads that carry only the fields the writer owns, the writer's
// ownership read from managedFields, the no-op check that keeps an
// unchanged world at zero writes, and, on CRDs whose status lists are
// atomic, the merge that replaces the writer's entries and keeps everyone
// else's. pkg/clusterprofile's Writer sends what Plan decides.
//
// Plan reads alone for the common CRD, whose status lists are list-maps
// (status_listmaps.go); the paths for CRDs with atomic lists
// (status_atomic.go) and for profiles written before a CRD switched to
// list-maps (status_switched.go) each live in a file of their own.
package profilewrite
