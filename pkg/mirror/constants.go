package mirror

import "open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"

const (
	// ControllerName names the controller in logs and metrics.
	ControllerName = "clusterprofile-mirror"

	// defaultWriteSlots are the write slots of a mirror given no worker
	// count (Options.Workers): as many as the chart's mirrorWorkers.
	defaultWriteSlots = 16

	// AnnotationMirroredProperties lists (as a JSON array) the property names
	// the mirror wrote. It is only used on ClusterProfile CRDs whose status
	// lists are atomic: there managedFields cannot tell which entries are the
	// mirror's, and the mirror must not drop another writer's properties.
	AnnotationMirroredProperties = "mirror.clusterprofile.open-cluster-management.io/properties"

	// Default reasons for the rare source condition without one; a condition
	// reason may never be empty.
	defaultControlPlaneReason = "ManagedClusterAvailable"
	defaultJoinedReason       = "ManagedClusterJoined"

	// DefaultNamespace holds the id records of a manager that was given no
	// namespace of its own (the chart gives it the release namespace).
	DefaultNamespace = "default"

	// ReasonNoFreshAgentReport marks a ControlPlaneHealthy taken from the
	// klusterlet because the agent has not reported freshly.
	ReasonNoFreshAgentReport = "NoFreshAgentReport"
)

// Well-known properties (KEP-2149 ClusterId, KEP-4322 ClusterProfile); see
// pkg/clusterprofile.
const (
	PropertyClaimID    = clusterprofile.PropertyClaimID
	PropertyClusterID  = clusterprofile.PropertyClusterID
	PropertyClusterSet = clusterprofile.PropertyClusterSet
)

// Event reasons.
const (
	ReasonClaimsSkipped = "ClusterClaimsSkipped"
	ReasonNameClash     = "ClusterProfileNameClash"
	ReasonWriteFailed   = "ClusterProfileWriteFailed"
	ReasonLabelsOmitted = "ClusterProfileLabelsOmitted"
	// ReasonClusterIDConflict is reported on a ManagedCluster that
	// publishes no cluster id: the one it asks for (its id.k8s.io claim, or
	// its name) is held by another ManagedCluster.
	ReasonClusterIDConflict = "ClusterIDConflict"
	// ReasonClusterNamespaceNotPublished is reported on a publishing binding
	// in a ManagedCluster's namespace, which publishes nothing.
	ReasonClusterNamespaceNotPublished = "ClusterNamespaceNotPublished"
)

// Event actions (the events.k8s.io "action" field).
const (
	actionMirror = "Mirror"
)
