package placementdecision

import (
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

const (
	// FieldManager owns what this capability writes on PlacementDecision
	// slices.
	FieldManager = fieldmanager.Prefix + "placement-decisions"

	// ControllerName names the controller in logs and metrics, and signs
	// its Events.
	ControllerName = "clusterprofile-placement-decisions"

	// CapabilityName names the capability in the manager's logs and in
	// clusterprofile_yielding_to_upstream.
	CapabilityName = "placement decisions"

	// SchedulerName is the slices' schedulerName: the decisions are OCM's
	// placement controller's. OCM's own writer of these slices uses the same.
	SchedulerName = "open-cluster-management"

	// MaxDecisionsPerSlice is KEP-5313's limit of decisions per slice.
	MaxDecisionsPerSlice = 100

	// nameInfix joins a Placement's name and a slice's number (from 1), as
	// OCM names its own PlacementDecisions and OCM's writer of these slices
	// names them after those: turning that writer off hands its slices
	// over in place.
	nameInfix = "-decision-"

	// settleFor is how long a Placement's slices wait for the next of the
	// profiles they lack while those keep appearing (holdWrite): longer
	// than the gaps between the mirror's writes of one namespace's profiles.
	// No other bound: each wait needs a profile more than the slices ever
	// would have referenced, which only the mirror creates, for a cluster
	// OCM chose and an admin bound here, so the waits end with the fleet.
	settleFor = 5 * time.Second
	// lookEvery is how often a held Placement is looked at (throttled),
	// however many profiles appear meanwhile: well within settleFor.
	lookEvery = 2 * time.Second
	// lookAtLeastEvery is how often a held Placement is looked at while
	// profile events keep coming: only a look tells whether the slices grew,
	// which alone keeps a hold going (events can come from profiles anyone
	// allowed to may create).
	lookAtLeastEvery = time.Minute
)

// Why a cluster a Placement chose is left out of its slices.
const (
	// LeftOutUnpublished: the Placement's namespace does not publish the
	// cluster (none of its bindings publishes a set that picks the cluster,
	// the binding opts out, the namespace is a cluster's own, or the cluster
	// is gone).
	LeftOutUnpublished = "unpublished"
	// LeftOutNoProfile: the namespace publishes the cluster, but its
	// ClusterProfile is not there (yet), or is being deleted.
	LeftOutNoProfile = "no-profile"
)

// Event reasons.
const (
	// ReasonClustersLeftOut: the slices leave out clusters the Placement
	// chose, named in the Event with the reason for each.
	ReasonClustersLeftOut = "PlacementDecisionClustersLeftOut"
	// ReasonAllReferenced: every cluster the Placement chose is in its
	// slices again.
	ReasonAllReferenced = "PlacementDecisionClustersReferenced"

	actionPublish = "PublishPlacementDecisions"
)
