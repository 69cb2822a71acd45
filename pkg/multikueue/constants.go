package multikueue

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

// Kueue's API, pinned here and nowhere else: the module does not import
// Kueue's types (they would drag Kueue's dependency versions in), so its
// objects are unstructured with these kinds.
var (
	// GroupVersion is the Kueue API version whose MultiKueueCluster has
	// spec.clusterSource.clusterProfileRef (v1beta2, Kueue v0.15 and later).
	GroupVersion = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}
	// ClusterKind is the cluster-scoped MultiKueueCluster.
	ClusterKind = GroupVersion.WithKind("MultiKueueCluster")
	// ConfigKind is the cluster-scoped MultiKueueConfig.
	ConfigKind = GroupVersion.WithKind("MultiKueueConfig")
)

const (
	// FieldManager owns what this capability writes on Kueue's objects.
	FieldManager = fieldmanager.Prefix + "multikueue"

	// ControllerName and ConfigControllerName name the controllers in logs
	// and metrics; ControllerName also signs the Events.
	ControllerName       = "clusterprofile-multikueue"
	ConfigControllerName = "clusterprofile-multikueue-config"

	// LabelCreatedBy marks the MultiKueueClusters (and the MultiKueueConfig)
	// this capability created, with the cluster manager's name as value. A
	// label is a claim anyone who may create the object can make, so an
	// object counts as ours only when our field manager wrote it too.
	LabelCreatedBy = "clusterprofile.open-cluster-management.io/multikueue"

	// DefaultNamespace is Kueue's default Configuration.namespace, the only
	// namespace whose ClusterProfiles MultiKueue reads.
	DefaultNamespace = "kueue-system"

	// MaxConfigClusters is the most clusters a MultiKueueConfig may list
	// (its schema's maxItems).
	MaxConfigClusters = 20
)

// Event reasons.
const (
	ReasonNameClash      = "MultiKueueClusterNameClash"
	ReasonConfigClash    = "MultiKueueConfigNameClash"
	ReasonConfigTooLarge = "MultiKueueConfigTooLarge"

	actionMultiKueue = "MultiKueue"
)
