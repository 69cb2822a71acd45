package clusterprofile

import (
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

const (
	// DefaultManagerName is the cluster manager name OCM uses for its profiles.
	DefaultManagerName = "open-cluster-management"

	// LabelClusterManager marks the cluster manager that owns a profile.
	LabelClusterManager = cpv1alpha1.LabelClusterManagerKey
	// LabelClusterSet names the ManagedClusterSet a profile was published for.
	LabelClusterSet = cpv1alpha1.LabelClusterSetKey
	// LabelClusterName names the ManagedCluster a profile describes.
	LabelClusterName = clusterv1.ClusterNameLabelKey

	// ConditionJoined tells whether the cluster has joined its manager. The
	// other condition types of a profile are cluster-inventory-api's
	// ControlPlaneHealthy and the agent's AllNodesHealthy (pkg/agentapi).
	ConditionJoined = "Joined"

	// MirrorFieldManager is the mirror's field manager (pkg/mirror): the
	// profiles it wrote are the ones it deletes when no namespace serves them.
	MirrorFieldManager = fieldmanager.Prefix + "mirror"

	// CRDName is the name of the ClusterProfile CustomResourceDefinition.
	CRDName = "clusterprofiles.multicluster.x-k8s.io"
)

// Well-known properties (KEP-2149 ClusterId, KEP-4322 ClusterProfile).
const (
	// PropertyClaimID is the claim (and property) holding a cluster's
	// KEP-2149 id when the cluster has one.
	PropertyClaimID = "id.k8s.io"
	// PropertyClusterID is the standard property naming the cluster within
	// its set (the mirror decides it: pkg/mirror's identity.go).
	PropertyClusterID = "cluster.clusterset.k8s.io"
	// PropertyClusterSet is the standard property naming the set: the
	// ManagedClusterSet that puts the cluster in the profile's namespace.
	PropertyClusterSet = "clusterset.k8s.io"
)
