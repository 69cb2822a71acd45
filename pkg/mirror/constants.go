package mirror

import "open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"

const (
	// FieldManager owns the fields the mirror writes on ClusterProfiles.
	FieldManager = clusterprofile.MirrorFieldManager

	// ControllerName names the controller in logs and metrics.
	ControllerName = "clusterprofile-mirror"

	// AnnotationMirroredProperties lists (as a JSON array) the property names
	// the mirror wrote. It is only used on ClusterProfile CRDs whose status
	// lists are atomic: there managedFields cannot tell which entries are the
	// mirror's, and the mirror must not drop another writer's properties.
	AnnotationMirroredProperties = "mirror.clusterprofile.open-cluster-management.io/properties"

	// Default reasons for the rare source condition without one; a condition
	// reason may never be empty.
	defaultControlPlaneReason = "ManagedClusterAvailable"
	defaultJoinedReason       = "ManagedClusterJoined"

	// ReasonNoFreshAgentReport marks a ControlPlaneHealthy taken from the
	// klusterlet because the agent has not reported freshly.
	ReasonNoFreshAgentReport = "NoFreshAgentReport"
)

// Event reasons.
const (
	ReasonClaimsSkipped = "ClusterClaimsSkipped"
	ReasonNameClash     = "ClusterProfileNameClash"
	ReasonWriteFailed   = "ClusterProfileWriteFailed"
	ReasonLabelsOmitted = "ClusterProfileLabelsOmitted"
)

// Event actions (the events.k8s.io "action" field).
const (
	actionMirror = "Mirror"
)
