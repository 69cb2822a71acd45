package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1alpha1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// ClaimLabelValue is the value of agentapi.ClaimLabel on the agent's claims;
// the agent recognises its claims by the label's presence.
const ClaimLabelValue = "true"

// Claims are the ClusterClaims the agent publishes for a node summary, by
// name. Quantities are rendered canonically ("48Gi", "11500m"). CPU, memory
// and pods are always published; GPU claims only when a node advertises
// nvidia.com/gpu, so clusters without GPUs carry no GPU properties.
func Claims(s NodeSummary) map[string]string {
	claims := map[string]string{
		agentapi.ClaimNodes:             strconv.Itoa(s.Nodes),
		agentapi.ClaimNodesReady:        strconv.Itoa(s.Ready),
		agentapi.ClaimCPUCapacity:       quantity(s.Capacity, corev1.ResourceCPU),
		agentapi.ClaimCPUAllocatable:    quantity(s.Allocatable, corev1.ResourceCPU),
		agentapi.ClaimMemoryCapacity:    quantity(s.Capacity, corev1.ResourceMemory),
		agentapi.ClaimMemoryAllocatable: quantity(s.Allocatable, corev1.ResourceMemory),
		agentapi.ClaimPodsAllocatable:   quantity(s.Allocatable, corev1.ResourcePods),
	}
	if _, ok := s.Capacity[ResourceGPU]; ok {
		claims[agentapi.ClaimGPUCapacity] = quantity(s.Capacity, ResourceGPU)
	}
	if _, ok := s.Allocatable[ResourceGPU]; ok {
		claims[agentapi.ClaimGPUAllocatable] = quantity(s.Allocatable, ResourceGPU)
	}
	return claims
}

func quantity(list corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := list[name]
	if !ok {
		return "0"
	}
	return q.String()
}

// ClaimsPlan is what brings the cluster's ClusterClaims to the wanted ones.
type ClaimsPlan struct {
	Create []clusterv1alpha1.ClusterClaim
	// Update holds existing claims with their new value.
	Update []clusterv1alpha1.ClusterClaim
	// Delete names the agent's claims it no longer produces.
	Delete []string
	// Foreign names wanted claims held by a claim without the agent's label:
	// somebody else's, left alone.
	Foreign []string
	// Unlisted names wanted claims outside agentapi.Claims, which are never
	// written. The agent's RBAC cannot narrow create by name, so this is
	// what keeps it from creating a reserved claim such as id.k8s.io, from
	// which the hub takes a cluster's id.
	Unlisted []string
}

// Empty tells whether the plan changes nothing.
func (p ClaimsPlan) Empty() bool {
	return len(p.Create) == 0 && len(p.Update) == 0 && len(p.Delete) == 0
}

// PlanClaims compares the wanted claims with every ClusterClaim of the
// cluster. Only claims named in agentapi.Claims are ever created, and only
// those that also carry agentapi.ClaimLabel are updated or deleted, whatever
// want holds.
//
// owner, when known, is set on every claim the agent creates and added to
// those that lack it, so that the claims go when the addon goes.
func PlanClaims(want map[string]string, existing []clusterv1alpha1.ClusterClaim, owner *metav1.OwnerReference) ClaimsPlan {
	var plan ClaimsPlan
	want, plan.Unlisted = listedClaims(want)
	seen := map[string]bool{}
	for i := range existing {
		claim := &existing[i]
		seen[claim.Name] = true
		value, wanted := want[claim.Name]
		switch {
		case !isAgentClaim(claim):
			if wanted {
				plan.Foreign = append(plan.Foreign, claim.Name)
			}
		case !wanted:
			plan.Delete = append(plan.Delete, claim.Name)
		case claim.Spec.Value != value || !ownedBy(claim, owner):
			updated := claim.DeepCopy()
			updated.Spec.Value = value
			if !ownedBy(claim, owner) {
				updated.OwnerReferences = append(updated.OwnerReferences, *owner)
			}
			plan.Update = append(plan.Update, *updated)
		}
	}
	for name, value := range want {
		if !seen[name] {
			claim := clusterv1alpha1.ClusterClaim{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{agentapi.ClaimLabel: ClaimLabelValue}},
				Spec:       clusterv1alpha1.ClusterClaimSpec{Value: value},
			}
			if owner != nil {
				claim.OwnerReferences = []metav1.OwnerReference{*owner}
			}
			plan.Create = append(plan.Create, claim)
		}
	}
	sort.Slice(plan.Create, func(i, j int) bool { return plan.Create[i].Name < plan.Create[j].Name })
	sort.Slice(plan.Update, func(i, j int) bool { return plan.Update[i].Name < plan.Update[j].Name })
	sort.Strings(plan.Delete)
	sort.Strings(plan.Foreign)
	return plan
}

// Writable is want without the names the plan never writes (foreign and
// unlisted): the facts the write budget compares with agentClaimValues.
func (p ClaimsPlan) Writable(want map[string]string) map[string]string {
	out := make(map[string]string, len(want))
	for name, value := range want {
		if !slices.Contains(p.Foreign, name) && !slices.Contains(p.Unlisted, name) {
			out[name] = value
		}
	}
	return out
}

// agentClaimValues are the values of the agent's claims among existing.
func agentClaimValues(existing []clusterv1alpha1.ClusterClaim) map[string]string {
	out := map[string]string{}
	for i := range existing {
		if isAgentClaim(&existing[i]) {
			out[existing[i].Name] = existing[i].Spec.Value
		}
	}
	return out
}

// listedClaims splits want into the claims named in agentapi.Claims and,
// sorted, the names of the others.
func listedClaims(want map[string]string) (map[string]string, []string) {
	listed := make(map[string]string, len(want))
	var unlisted []string
	for name, value := range want {
		if slices.Contains(agentapi.Claims, name) {
			listed[name] = value
		} else {
			unlisted = append(unlisted, name)
		}
	}
	sort.Strings(unlisted)
	return listed, unlisted
}

// isAgentClaim tells whether the agent wrote claim: one of its names, with
// its label. A labelled claim of another name is somebody else's (and the
// agent's RBAC could not touch it anyway).
func isAgentClaim(claim *clusterv1alpha1.ClusterClaim) bool {
	_, ok := claim.Labels[agentapi.ClaimLabel]
	return ok && slices.Contains(agentapi.Claims, claim.Name)
}

// applyClaims carries out a plan, going on past a failed claim so that one
// bad claim does not hold back the others.
func applyClaims(ctx context.Context, claims clusterclient.ClusterClaimInterface, plan ClaimsPlan) error {
	logger := ctrl.LoggerFrom(ctx)
	var errs []error
	for i := range plan.Create {
		claim := &plan.Create[i]
		if _, err := claims.Create(ctx, claim, metav1.CreateOptions{FieldManager: agentapi.FieldManager}); err != nil {
			errs = append(errs, fmt.Errorf("creating ClusterClaim %s: %w", claim.Name, err))
			continue
		}
		logger.V(2).Info("Created ClusterClaim", "claim", claim.Name, "value", claim.Spec.Value)
	}
	for i := range plan.Update {
		claim := &plan.Update[i]
		if _, err := claims.Update(ctx, claim, metav1.UpdateOptions{FieldManager: agentapi.FieldManager}); err != nil {
			errs = append(errs, fmt.Errorf("updating ClusterClaim %s: %w", claim.Name, err))
			continue
		}
		logger.V(2).Info("Updated ClusterClaim", "claim", claim.Name, "value", claim.Spec.Value)
	}
	for _, name := range plan.Delete {
		if err := claims.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting stale ClusterClaim %s: %w", name, err))
			continue
		}
		logger.V(2).Info("Deleted stale ClusterClaim", "claim", name)
	}
	return errors.Join(errs...)
}

// ownedBy tells whether claim already carries owner (true for no owner).
func ownedBy(claim *clusterv1alpha1.ClusterClaim, owner *metav1.OwnerReference) bool {
	return owner == nil || slices.ContainsFunc(claim.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == owner.UID })
}

// ClaimsOwner is the reference the agent's claims carry to its ClusterRole
// (agentapi.ClusterRole).
func ClaimsOwner(role *rbacv1.ClusterRole) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole", Name: role.Name, UID: role.UID}
}
