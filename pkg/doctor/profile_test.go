package doctor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
)

// TestCheckClusterNameLabel: the doctor expects the label exactly where the
// mirror writes it (clusterprofile.ClusterNameLabel).
func TestCheckClusterNameLabel(t *testing.T) {
	long := strings.Repeat("c", 64) // a valid cluster name, no valid label value
	tests := map[string]struct {
		name   string
		labels map[string]string
		want   []string
	}{
		"labelled with its name":        {name: "cluster1", labels: map[string]string{clusterprofile.LabelClusterName: "cluster1"}},
		"a long name, unlabelled":       {name: long},
		"a short name, unlabelled":      {name: "cluster1", want: []string{`The label open-cluster-management.io/cluster-name is "", not the profile's name "cluster1": the mirror writes it; delete the profile and let the mirror recreate it.`}},
		"a long name with another name": {name: long, labels: map[string]string{clusterprofile.LabelClusterName: "cluster1"}, want: []string{`The label open-cluster-management.io/cluster-name is "cluster1", but the profile's name is no valid label value, so the mirror leaves the label off: the profile was not published by this bundle; delete it and let the mirror recreate it.`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: tc.labels}}
			if diff := cmp.Diff(tc.want, checkClusterNameLabel(p)); diff != "" {
				t.Errorf("fixes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAgentNotes: the doctor says when a profile's health is the
// klusterlet's because the cluster's agent reports nothing, and only then.
func TestAgentNotes(t *testing.T) {
	withHealth := func(status metav1.ConditionStatus, reason string) *cpv1alpha1.ClusterProfile {
		p := healthyProfile(nil)
		p.Status.Conditions = []metav1.Condition{{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: status, Reason: reason}}
		return p
	}
	noCondition := healthyProfile(nil)
	noCondition.Status.Conditions = nil
	fallback := `ControlPlaneHealthy is the klusterlet's view: cluster-profile-agent on cluster cluster1 reports nothing; the hub's admins can check its ManagedClusterAddOn in namespace cluster1 (docs/operations.md, "A cluster's agent reports nothing").`
	tests := map[string]struct {
		profile *cpv1alpha1.ClusterProfile
		want    []string
	}{
		"the agent's report":                   {profile: withHealth(metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed)},
		"the klusterlet's, no agent installed": {profile: withHealth(metav1.ConditionTrue, "ManagedClusterAvailable")},
		"no condition":                         {profile: noCondition},
		"the agent silent, cluster healthy":    {profile: withHealth(metav1.ConditionTrue, mirror.ReasonNoFreshAgentReport), want: []string{fallback}},
		"the agent silent, cluster unhealthy":  {profile: withHealth(metav1.ConditionFalse, mirror.ReasonNoFreshAgentReport), want: []string{fallback}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, agentNotes(tc.profile)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIDNotes: the doctor says when the mirror published a profile without
// a cluster id because another cluster holds it (the set is named, the id
// is not), and only then.
func TestIDNotes(t *testing.T) {
	with := func(properties ...string) *cpv1alpha1.ClusterProfile {
		p := healthyProfile(nil)
		p.Status.Properties = nil
		for _, name := range properties {
			p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: name, Value: "v"})
		}
		return p
	}
	tests := map[string]struct {
		profile *cpv1alpha1.ClusterProfile
		want    []string
	}{
		"an id and a set":             {profile: with(mirror.PropertyClusterID, mirror.PropertyClusterSet)},
		"neither (OCM's mirror, say)": {profile: with("region")},
		"an id only (another writer)": {profile: with(mirror.PropertyClusterID)},
		"a set without an id: held elsewhere": {profile: with(mirror.PropertyClusterSet), want: []string{
			`The profile carries no cluster.clusterset.k8s.io (the KEP-2149 cluster id): the id cluster cluster1 asks for (its name, or its id.k8s.io claim) ` +
				`is held by another cluster that published it first, and ids stay with their holder; consumers that key clusters by that id do not ` +
				`see this one until the holder releases it. The hub's admins find the holder in the ClusterIDConflict Event on ManagedCluster cluster1 ` +
				`(docs/security.md, "Cluster ids").`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, idNotes(tc.profile)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}
