package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

func TestClaims(t *testing.T) {
	cases := map[string]struct {
		nodes []*agenttest.NodeWrapper
		want  map[string]string
	}{
		"with GPUs": {
			nodes: []*agenttest.NodeWrapper{
				agenttest.MakeNode("a").Capacity("16", "64Gi", "110").Allocatable("15500m", "62Gi", "110").GPUs("4", "4"),
				agenttest.MakeNode("b").NotReady().Capacity("16", "64Gi", "110").GPUs("4", "2"),
			},
			want: map[string]string{
				agentapi.ClaimNodes: "2", agentapi.ClaimNodesReady: "1",
				agentapi.ClaimCPUCapacity: "32", agentapi.ClaimCPUAllocatable: "31500m",
				agentapi.ClaimMemoryCapacity: "128Gi", agentapi.ClaimMemoryAllocatable: "126Gi",
				agentapi.ClaimPodsAllocatable: "220",
				agentapi.ClaimGPUCapacity:     "8", agentapi.ClaimGPUAllocatable: "6",
			},
		},
		"without GPUs": {
			nodes: []*agenttest.NodeWrapper{agenttest.MakeNode("a").Capacity("2", "4Gi", "110")},
			want: map[string]string{
				agentapi.ClaimNodes: "1", agentapi.ClaimNodesReady: "1",
				agentapi.ClaimCPUCapacity: "2", agentapi.ClaimCPUAllocatable: "2",
				agentapi.ClaimMemoryCapacity: "4Gi", agentapi.ClaimMemoryAllocatable: "4Gi",
				agentapi.ClaimPodsAllocatable: "110",
			},
		},
		"GPUs advertised but none allocatable": {
			nodes: []*agenttest.NodeWrapper{agenttest.MakeNode("a").Capacity("2", "4Gi", "110").GPUs("1", "0")},
			want: map[string]string{
				agentapi.ClaimNodes: "1", agentapi.ClaimNodesReady: "1",
				agentapi.ClaimCPUCapacity: "2", agentapi.ClaimCPUAllocatable: "2",
				agentapi.ClaimMemoryCapacity: "4Gi", agentapi.ClaimMemoryAllocatable: "4Gi",
				agentapi.ClaimPodsAllocatable: "110",
				agentapi.ClaimGPUCapacity:     "1", agentapi.ClaimGPUAllocatable: "0",
			},
		},
		"no nodes": {
			want: map[string]string{
				agentapi.ClaimNodes: "0", agentapi.ClaimNodesReady: "0",
				agentapi.ClaimCPUCapacity: "0", agentapi.ClaimCPUAllocatable: "0",
				agentapi.ClaimMemoryCapacity: "0", agentapi.ClaimMemoryAllocatable: "0",
				agentapi.ClaimPodsAllocatable: "0",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, summary := NodesReport(nodes(tc.nodes...), 0)
			if diff := cmp.Diff(tc.want, Claims(summary)); diff != "" {
				t.Errorf("Claims (-want +got):\n%s", diff)
			}
		})
	}
}

func claim(name, value string, labelled bool) clusterv1alpha1.ClusterClaim {
	c := clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "7"},
		Spec: clusterv1alpha1.ClusterClaimSpec{Value: value}}
	if labelled {
		c.Labels = map[string]string{agentapi.ClaimLabel: ClaimLabelValue}
	}
	return c
}

// agentRole is the owner reference to the agent's ClusterRole.
var agentRole = ClaimsOwner(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: agentapi.ClusterRole, UID: "role-uid"}})

// owned is c with the owner reference to the agent's ClusterRole.
func owned(c clusterv1alpha1.ClusterClaim) clusterv1alpha1.ClusterClaim {
	c.OwnerReferences = []metav1.OwnerReference{*agentRole}
	return c
}

func TestPlanClaims(t *testing.T) {
	newClaim := func(name, value string) clusterv1alpha1.ClusterClaim {
		c := claim(name, value, true)
		c.ResourceVersion = ""
		return c
	}
	cases := map[string]struct {
		want     map[string]string
		existing []clusterv1alpha1.ClusterClaim
		owner    *metav1.OwnerReference
		plan     ClaimsPlan
	}{
		"claims are created owned by the agent's ClusterRole, and claims without the owner get it": {
			want:     map[string]string{agentapi.ClaimNodes: "3", agentapi.ClaimNodesReady: "3"},
			existing: []clusterv1alpha1.ClusterClaim{claim(agentapi.ClaimNodes, "3", true), claim("id.k8s.io", "abc", false)},
			owner:    agentRole,
			plan: ClaimsPlan{
				Create: []clusterv1alpha1.ClusterClaim{owned(newClaim(agentapi.ClaimNodesReady, "3"))},
				Update: []clusterv1alpha1.ClusterClaim{owned(claim(agentapi.ClaimNodes, "3", true))},
			},
		},
		"owned claims stay as they are": {
			want:     map[string]string{agentapi.ClaimNodes: "3"},
			existing: []clusterv1alpha1.ClusterClaim{owned(claim(agentapi.ClaimNodes, "3", true))},
			owner:    agentRole,
		},
		"first run creates every claim": {
			want: map[string]string{agentapi.ClaimNodes: "3", agentapi.ClaimNodesReady: "3"},
			// Sorted by name: "nodes-ready." comes before "nodes.".
			plan: ClaimsPlan{Create: []clusterv1alpha1.ClusterClaim{
				newClaim(agentapi.ClaimNodesReady, "3"), newClaim(agentapi.ClaimNodes, "3")}},
		},
		"unchanged claims cost nothing": {
			want:     map[string]string{agentapi.ClaimNodes: "3"},
			existing: []clusterv1alpha1.ClusterClaim{claim(agentapi.ClaimNodes, "3", true), claim("id.k8s.io", "abc", false)},
		},
		"changed values are updated in place": {
			want:     map[string]string{agentapi.ClaimNodes: "3", agentapi.ClaimNodesReady: "2"},
			existing: []clusterv1alpha1.ClusterClaim{claim(agentapi.ClaimNodes, "3", true), claim(agentapi.ClaimNodesReady, "3", true)},
			plan:     ClaimsPlan{Update: []clusterv1alpha1.ClusterClaim{claim(agentapi.ClaimNodesReady, "2", true)}},
		},
		"stale agent claims are deleted; others, and labelled claims of other names, kept": {
			want: map[string]string{agentapi.ClaimNodes: "3"},
			existing: []clusterv1alpha1.ClusterClaim{
				claim(agentapi.ClaimNodes, "3", true),
				claim(agentapi.ClaimGPUCapacity, "8", true),
				claim(agentapi.ClaimGPUAllocatable, "8", true),
				claim("old-name"+agentapi.ClaimSuffix, "x", true),
				claim("platform.open-cluster-management.io", "AWS", false),
				claim("unlabelled"+agentapi.ClaimSuffix, "y", false),
			},
			plan: ClaimsPlan{Delete: []string{agentapi.ClaimGPUAllocatable, agentapi.ClaimGPUCapacity}},
		},
		"a wanted name held by somebody else is left alone": {
			want:     map[string]string{agentapi.ClaimNodes: "3", agentapi.ClaimNodesReady: "3"},
			existing: []clusterv1alpha1.ClusterClaim{claim(agentapi.ClaimNodes, "99", false)},
			plan: ClaimsPlan{
				Create:  []clusterv1alpha1.ClusterClaim{newClaim(agentapi.ClaimNodesReady, "3")},
				Foreign: []string{agentapi.ClaimNodes},
			},
		},
		"a wanted name outside agentapi.Claims is never created, a reserved one least of all": {
			want: map[string]string{agentapi.ClaimNodes: "3", "id.k8s.io": "spoofed", "region" + agentapi.ClaimSuffix: "eu"},
			plan: ClaimsPlan{
				Create:   []clusterv1alpha1.ClusterClaim{newClaim(agentapi.ClaimNodes, "3")},
				Unlisted: []string{"id.k8s.io", "region" + agentapi.ClaimSuffix},
			},
		},
		"a wanted name outside agentapi.Claims is not updated either, even labelled": {
			want:     map[string]string{"id.k8s.io": "spoofed"},
			existing: []clusterv1alpha1.ClusterClaim{claim("id.k8s.io", "abc", true)},
			plan:     ClaimsPlan{Unlisted: []string{"id.k8s.io"}},
		},
		"a label on a reserved claim does not make it the agent's": {
			want:     map[string]string{},
			existing: []clusterv1alpha1.ClusterClaim{claim("id.k8s.io", "abc", true)},
		},
		"a label with any value marks the agent's claims": {
			want: map[string]string{},
			existing: []clusterv1alpha1.ClusterClaim{func() clusterv1alpha1.ClusterClaim {
				c := claim(agentapi.ClaimNodes, "3", true)
				c.Labels[agentapi.ClaimLabel] = "something-else"
				return c
			}()},
			plan: ClaimsPlan{Delete: []string{agentapi.ClaimNodes}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PlanClaims(tc.want, tc.existing, tc.owner)
			if diff := cmp.Diff(tc.plan, got); diff != "" {
				t.Errorf("PlanClaims (-want +got):\n%s", diff)
			}
			if got.Empty() != (len(tc.plan.Create)+len(tc.plan.Update)+len(tc.plan.Delete) == 0) {
				t.Errorf("Empty() = %v for %+v", got.Empty(), got)
			}
		})
	}
}
