package mirror

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// World is the part of the hub that decides where one cluster is published
// and what its profiles say.
type World struct {
	membership.Publishing
	// Agent is the cluster-profile-agent's report; nil when the agent
	// feature is off, so the klusterlet's conditions are mirrored as they are.
	Agent *AgentReport
	// IDCandidates are the ManagedClusters named like the cluster's
	// id.k8s.io claim or claiming it too (IndexClusterIDCandidate); the
	// cluster itself may be among them. Empty when it claims no id.
	IDCandidates []clusterv1.ManagedCluster
	// IDRecords are the id records of the id the cluster asks for and of
	// the ids it holds.
	IDRecords []IDRecord
}

// AgentReport is what the cluster-profile-agent last reported for a cluster.
type AgentReport struct {
	// Fresh tells whether the agent is alive: its ManagedClusterAddOn is
	// Available, which the klusterlet keeps true while the agent renews its
	// lease. A stale report is not used.
	Fresh bool
	// ControlPlane and Nodes are the agent's conditions, nil when absent.
	ControlPlane, Nodes *metav1.Condition
}

// Desired is what the mirror wants for one cluster.
type Desired struct {
	// SetByNamespace maps each namespace that should hold the cluster's
	// profile to the set it is published for.
	SetByNamespace map[string]string
	// Status is the status every profile of the cluster carries.
	Status Status
	// SkippedClaims are claims the ClusterProfile schema would reject, and
	// claims named like a standard property (which yield to it).
	SkippedClaims []SkippedClaim
	// ID is the cluster's KEP-2149 id and the id records that go with it
	// (decideID): its id.k8s.io claim, or its ManagedCluster name, unless
	// another cluster holds that id; then none, and the id.k8s.io property
	// is left out of the profiles too, so no two profiles carry one id.
	// Empty for a nil or deleting cluster.
	ID IDDecision
}

// StatusIn is the status of the cluster's profile in namespace ns: the
// cluster's status plus the standard properties of KEP-2149 / KEP-4322, so
// consumers written against the standard find the cluster's id and the set
// that puts it in ns without knowing OCM. A cluster refused the id it asks
// for still names its set.
func (d Desired) StatusIn(ns string) Status {
	status := d.Status
	if d.ID.ID == "" && d.ID.Conflict == nil {
		return status
	}
	status.Properties = append(make([]cpv1alpha1.Property, 0, len(status.Properties)+2), status.Properties...)
	if d.ID.ID != "" {
		status.Properties = append(status.Properties, cpv1alpha1.Property{Name: PropertyClusterID, Value: d.ID.ID})
	}
	status.Properties = append(status.Properties, cpv1alpha1.Property{Name: PropertyClusterSet, Value: d.SetByNamespace[ns]})
	return status
}

// Status is the mirror's share of a profile's status.
type Status struct {
	Version    string
	Conditions []metav1.Condition
	Properties []cpv1alpha1.Property
}

// SkippedClaim is a cluster claim that could not become a profile property.
type SkippedClaim struct {
	Name   string
	Reason string
}

func (s SkippedClaim) String() string { return fmt.Sprintf("%q (%s)", s.Name, s.Reason) }

// Bounds of a property, from the ClusterProfile schema.
const (
	maxPropertyName  = 253
	maxPropertyValue = 1024
)

// MaxPropertiesBytes bounds the names and values of a profile's properties
// together. The schema bounds each property but not their number, and a
// cluster's claims may fill nearly all of the 1.5 MiB etcd keeps per
// object; the profile also carries conditions, access entries with their CA
// bundles and other writers' entries, so copying such claims whole would
// make every write of the profile fail. Claims past the budget are skipped
// and reported, as invalid ones are.
const MaxPropertiesBytes = 512 * 1024

// DesiredProfiles decides, from the world alone, which namespaces publish the
// cluster named name (membership.Served) and what its profiles say. A nil
// or deleting cluster has none; a gone one releases its ids.
func DesiredProfiles(name string, cluster *clusterv1.ManagedCluster, world World) Desired {
	desired := Desired{SetByNamespace: membership.Served(cluster, world.Publishing),
		ID: decideID(name, cluster, world.IDCandidates, world.IDRecords)}
	if cluster == nil || !cluster.DeletionTimestamp.IsZero() {
		return desired
	}
	desired.Status, desired.SkippedClaims = desiredStatus(cluster, world.Agent)
	if desired.ID.Conflict != nil {
		desired.Status.Properties = slices.DeleteFunc(desired.Status.Properties, func(p cpv1alpha1.Property) bool {
			return p.Name == PropertyClaimID
		})
	}
	return desired
}

func desiredStatus(cluster *clusterv1.ManagedCluster, agent *AgentReport) (Status, []SkippedClaim) {
	status := Status{Version: cluster.Status.Version.Kubernetes}
	if c := controlPlaneCondition(cluster, agent); c != nil {
		status.Conditions = append(status.Conditions, *c)
	}
	if agent != nil && agent.Fresh && agent.Nodes != nil {
		status.Conditions = append(status.Conditions, fromAgent(*agent.Nodes, agentapi.ConditionAllNodesHealthy))
	}
	if c := mirroredCondition(cluster, clusterv1.ManagedClusterConditionJoined,
		clusterprofile.ConditionJoined, defaultJoinedReason); c != nil {
		status.Conditions = append(status.Conditions, *c)
	}
	var skipped []SkippedClaim
	status.Properties, skipped = claimsToProperties(cluster.Status.ClusterClaims)
	return status, skipped
}

// controlPlaneCondition is the agent's ControlPlaneHealthy when it reported
// one freshly; otherwise the klusterlet's Available. With the agent on, a
// fallback says so in its reason, and keeps the klusterlet's in the message.
func controlPlaneCondition(cluster *clusterv1.ManagedCluster, agent *AgentReport) *metav1.Condition {
	if agent != nil && agent.Fresh && agent.ControlPlane != nil {
		c := fromAgent(*agent.ControlPlane, cpv1alpha1.ClusterConditionControlPlaneHealthy)
		return &c
	}
	c := mirroredCondition(cluster, clusterv1.ManagedClusterConditionAvailable,
		cpv1alpha1.ClusterConditionControlPlaneHealthy, defaultControlPlaneReason)
	if c == nil || agent == nil {
		return c
	}
	c.Message = fmt.Sprintf("No fresh report from %s; the klusterlet reports %s: %s", agentapi.AddonName, c.Reason, c.Message)
	c.Reason = ReasonNoFreshAgentReport
	return c
}

// fromAgent copies one of the agent's conditions (whose reasons all start
// with "Agent", naming the source) onto the profile.
func fromAgent(c metav1.Condition, targetType string) metav1.Condition {
	return metav1.Condition{Type: targetType, Status: c.Status, Reason: c.Reason, Message: c.Message,
		LastTransitionTime: c.LastTransitionTime}
}

// mirroredCondition copies a ManagedCluster condition under the profile's
// condition type. A source condition that is gone yields nil, so the
// condition disappears from the profile too.
func mirroredCondition(cluster *clusterv1.ManagedCluster, sourceType, targetType, defaultReason string) *metav1.Condition {
	source := meta.FindStatusCondition(cluster.Status.Conditions, sourceType)
	if source == nil {
		return nil
	}
	c := metav1.Condition{
		Type:               targetType,
		Status:             source.Status,
		Reason:             source.Reason,
		Message:            source.Message,
		LastTransitionTime: source.LastTransitionTime,
	}
	if c.Reason == "" {
		c.Reason = defaultReason
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = cluster.CreationTimestamp
	}
	return &c
}

// claimsToProperties turns claims into properties the profile schema accepts.
// ManagedCluster's clusterClaims is a plain list; a profile's properties are a
// list-map keyed by name with bounded, required name and value, so a single
// bad claim would make the API server refuse the whole status write. Such
// claims are skipped and returned; of duplicate names the first wins. Claims
// named like a standard property yield to it (StatusIn adds those).
func claimsToProperties(claims []clusterv1.ManagedClusterClaim) ([]cpv1alpha1.Property, []SkippedClaim) {
	var properties []cpv1alpha1.Property
	var skipped []SkippedClaim
	seen := sets.New[string]()
	size := 0
	for _, claim := range claims {
		reason := invalidClaim(claim, seen)
		if reason == "" && size+len(claim.Name)+len(claim.Value) > MaxPropertiesBytes {
			reason = fmt.Sprintf("the profile's properties would exceed %d bytes", MaxPropertiesBytes)
		}
		if reason != "" {
			skipped = append(skipped, SkippedClaim{Name: claim.Name, Reason: reason})
			continue
		}
		size += len(claim.Name) + len(claim.Value)
		seen.Insert(claim.Name)
		properties = append(properties, cpv1alpha1.Property{Name: claim.Name, Value: claim.Value})
	}
	return properties, skipped
}

func invalidClaim(claim clusterv1.ManagedClusterClaim, seen sets.Set[string]) string {
	switch {
	case claim.Name == "":
		return "empty name"
	case len(claim.Name) > maxPropertyName:
		return fmt.Sprintf("name longer than %d characters", maxPropertyName)
	case claim.Value == "":
		return "empty value"
	case len(claim.Value) > maxPropertyValue:
		return fmt.Sprintf("value longer than %d characters", maxPropertyValue)
	case seen.Has(claim.Name):
		return "duplicate name, the first claim wins"
	case claim.Name == PropertyClusterID || claim.Name == PropertyClusterSet:
		return "name of a standard property, which the mirror sets"
	}
	return ""
}

// profileMeta is the mirror's metadata and spec for a profile. A cluster or
// set name that is no valid label value (longer than 63 characters, say: a
// name may have 253) leaves its label off rather than make the API server
// refuse the whole profile; OmittedLabels says which, for the report.
func profileMeta(key types.NamespacedName, clusterSet, managerName string) profilewrite.MetaApply {
	labels := map[string]string{clusterprofile.LabelClusterManager: managerName}
	for label, value := range map[string]string{
		clusterprofile.LabelClusterName: key.Name,
		clusterprofile.LabelClusterSet:  clusterSet,
	} {
		if clusterprofile.IsLabelValue(value) {
			labels[label] = value
		}
	}
	return profilewrite.MetaApply{
		NamespacedName: key,
		Labels:         labels,
		Spec: &cpv1alpha1.ClusterProfileSpec{
			DisplayName:    key.Name,
			ClusterManager: cpv1alpha1.ClusterManager{Name: managerName},
		},
	}
}

// OmittedLabels describes, sorted, the labels profileMeta leaves off the
// cluster's profiles because their values are no valid label values; empty
// when none is.
func OmittedLabels(clusterName string, desired Desired) []string {
	var omitted []string
	if len(desired.SetByNamespace) == 0 {
		return nil
	}
	if !clusterprofile.IsLabelValue(clusterName) {
		omitted = append(omitted, fmt.Sprintf("%s (the cluster name is no valid label value)", clusterprofile.LabelClusterName))
	}
	for ns, set := range desired.SetByNamespace {
		if !clusterprofile.IsLabelValue(set) {
			omitted = append(omitted, fmt.Sprintf("%s in namespace %s (set %q is no valid label value and no other bound set there is)",
				clusterprofile.LabelClusterSet, ns, set))
		}
	}
	sort.Strings(omitted)
	return omitted
}
