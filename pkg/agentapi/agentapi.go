// Package agentapi is the contract between the cluster-profile-agent, which
// runs on every managed cluster, and the hub side that deploys it and folds
// its reports into ClusterProfiles. Both import it so they cannot drift apart.
package agentapi

import cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

const (
	// AddonName is the OCM addon (ClusterManagementAddOn and each cluster's
	// ManagedClusterAddOn) that deploys the agent.
	AddonName = "cluster-profile-agent"
	// AgentName names the agent's hub identity (its CSR subject).
	AgentName = "agent"
	// DefaultInstallNamespace is where the agent runs on a managed cluster.
	DefaultInstallNamespace = "open-cluster-management-agent-addon"

	// FieldManager owns the agent's conditions on its ManagedClusterAddOn status.
	FieldManager = "clusterprofile-agent"

	// ConditionControlPlaneHealthy is KEP-4322's control plane health: API
	// server (/readyz, etcd included), controller-manager and scheduler. A
	// custom condition type on the ManagedClusterAddOn; the framework owns
	// Available, ManifestApplied, RegistrationApplied, Configured, Progressing.
	// It is the ClusterProfile condition type of the same name.
	ConditionControlPlaneHealthy = cpv1alpha1.ClusterConditionControlPlaneHealthy
	// ConditionAllNodesHealthy tells whether no more than the tolerated
	// number of nodes are not Ready or under pressure.
	ConditionAllNodesHealthy = "AllNodesHealthy"

	// Reasons of the agent's conditions. Each starts with "Agent" so that a
	// ClusterProfile condition says where it came from.
	ReasonAgentChecksPassed            = "AgentChecksPassed"
	ReasonAgentChecksPartiallyObserved = "AgentChecksPartiallyObserved"
	ReasonAgentChecksFailed            = "AgentChecksFailed"
	ReasonAgentNodesHealthy            = "AgentNodesHealthy"
	ReasonAgentNodesUnhealthy          = "AgentNodesUnhealthy"

	// ClaimSuffix ends the name of every ClusterClaim the agent writes. It is
	// the project's own domain (KEP-2149: never under .k8s.io).
	ClaimSuffix = ".clusterprofile.open-cluster-management.io"
)

// Claims the agent writes on its managed cluster; the klusterlet carries them
// to the ManagedCluster's status.clusterClaims and the mirror turns them into
// ClusterProfile properties. Nine claims, well within OCM's default limit of
// 20 custom claims.
var (
	ClaimNodes             = "nodes" + ClaimSuffix
	ClaimNodesReady        = "nodes-ready" + ClaimSuffix
	ClaimCPUCapacity       = "cpu-capacity" + ClaimSuffix
	ClaimCPUAllocatable    = "cpu-allocatable" + ClaimSuffix
	ClaimMemoryCapacity    = "memory-capacity" + ClaimSuffix
	ClaimMemoryAllocatable = "memory-allocatable" + ClaimSuffix
	ClaimPodsAllocatable   = "pods-allocatable" + ClaimSuffix
	ClaimGPUCapacity       = "gpu-capacity" + ClaimSuffix
	ClaimGPUAllocatable    = "gpu-allocatable" + ClaimSuffix
)

// Claims lists every claim the agent may write, and so the only names its
// managed-cluster RBAC lets it update or delete.
var Claims = []string{
	ClaimNodes, ClaimNodesReady, ClaimCPUCapacity, ClaimCPUAllocatable, ClaimMemoryCapacity,
	ClaimMemoryAllocatable, ClaimPodsAllocatable, ClaimGPUCapacity, ClaimGPUAllocatable,
}

// ClusterRole is the agent's cluster-wide rights on its managed cluster,
// part of the addon's manifests: OCM deletes it when the addon is removed
// from the cluster, and the agent's ClusterClaims, which it owns, go with
// it.
const ClusterRole = "open-cluster-management:cluster-profile-agent"

// ClaimLabel marks the ClusterClaims the agent owns, so it can find and
// remove its own stale claims and never touches anybody else's.
const ClaimLabel = "clusterprofile.open-cluster-management.io/agent"
