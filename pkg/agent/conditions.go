package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned/typed/addon/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// ConditionTypes are the conditions the agent owns on its ManagedClusterAddOn.
// Every other condition there (Available, ManifestApplied, ...) belongs to
// the addon framework and is never sent.
var ConditionTypes = []string{agentapi.ConditionControlPlaneHealthy, agentapi.ConditionAllNodesHealthy}

// PlanConditions returns the conditions to apply for want, given what the hub
// holds (current), and whether that differs from current. A condition keeps
// its transition time while its status stays the same; a new condition or a
// new status transitions now.
func PlanConditions(current, want []metav1.Condition, now time.Time) ([]metav1.Condition, bool) {
	// The API server stores seconds; a finer time would always look changed.
	// Stamping it here, rather than leaving it to SetStatusCondition, also
	// keeps the agent's clock (not the wall clock) the one that decides it.
	transition := metav1.NewTime(now).Rfc3339Copy()
	// A copy: SetStatusCondition edits the entries it finds in place.
	merged := slices.Clone(current)
	changed := false
	for _, w := range want {
		w.LastTransitionTime = transition
		changed = meta.SetStatusCondition(&merged, w) || changed
	}
	// Only the wanted types, in want's order: the apply body names exactly the
	// conditions the agent owns.
	planned := make([]metav1.Condition, 0, len(want))
	for _, w := range want {
		planned = append(planned, *meta.FindStatusCondition(merged, w.Type))
	}
	return planned, changed
}

// ownConditions keeps the agent's conditions out of a status.
func ownConditions(all []metav1.Condition) []metav1.Condition {
	var own []metav1.Condition
	for _, t := range ConditionTypes {
		if c := meta.FindStatusCondition(all, t); c != nil {
			own = append(own, *c)
		}
	}
	return own
}

// hubReporter reads and writes the agent's conditions on its
// ManagedClusterAddOn through the status subresource only: that is all the
// agent's hub identity may touch.
type hubReporter struct {
	client    addonclient.AddonV1beta1Interface
	namespace string
}

func (h hubReporter) key() string { return h.namespace + "/" + agentapi.AddonName }

// read returns the agent's conditions as the hub holds them.
func (h hubReporter) read(ctx context.Context) ([]metav1.Condition, error) {
	addon := &addonv1beta1.ManagedClusterAddOn{}
	err := h.client.RESTClient().Get().Namespace(h.namespace).Resource("managedclusteraddons").
		Name(agentapi.AddonName).SubResource("status").Do(ctx).Into(addon)
	if err != nil {
		return nil, fmt.Errorf("reading status of ManagedClusterAddOn %s: %w", h.key(), err)
	}
	return ownConditions(addon.Status.Conditions), nil
}

// addonStatusApply is the Server-Side Apply body: only the agent's
// conditions, so the field manager owns those list entries and nothing else.
type addonStatusApply struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// apply sends the agent's conditions and returns them as stored. Ownership is
// forced: the agent is the only authority on these condition types.
func (h hubReporter) apply(ctx context.Context, conditions []metav1.Condition) ([]metav1.Condition, error) {
	body := addonStatusApply{APIVersion: addonv1beta1.GroupVersion.String(), Kind: "ManagedClusterAddOn"}
	body.Metadata.Name, body.Metadata.Namespace = agentapi.AddonName, h.namespace
	body.Status.Conditions = conditions
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	addon, err := h.client.ManagedClusterAddOns(h.namespace).Patch(ctx, agentapi.AddonName, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: agentapi.FieldManager, Force: ptr.To(true)}, "status")
	if err != nil {
		return nil, fmt.Errorf("applying conditions to ManagedClusterAddOn %s: %w", h.key(), err)
	}
	return ownConditions(addon.Status.Conditions), nil
}
