package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// pollInterval is how often the demo reads the profiles while waiting.
const pollInterval = 50 * time.Millisecond

// waitForConvergence polls the hub until its ClusterProfiles read as the
// scenario says, and fails after timeout naming what still differs, or at
// once if the manager exits.
func (s *scenario) waitForConvergence(ctx context.Context, h *hub, mgr *managerProcess, timeout time.Duration, what string) error {
	deadline := time.Now().Add(timeout)
	for {
		profiles, err := listProfiles(ctx, h)
		var differences []string
		if err == nil {
			differences = s.differences(profiles, h.managerName)
			if len(differences) == 0 {
				return nil
			}
		} else {
			differences = []string{err.Error()}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the ClusterProfiles did not converge within %s after %s (the manager logs to %s); still different:\n  - %s",
				timeout, what, displayPath(mgr.logPath), strings.Join(differences, "\n  - "))
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-mgr.exited:
			return mgr.exitError()
		case <-time.After(pollInterval):
		}
	}
}

// listProfiles reads the profiles the demo's manager writes, sorted.
func listProfiles(ctx context.Context, h *hub) ([]cpv1alpha1.ClusterProfile, error) {
	list := &cpv1alpha1.ClusterProfileList{}
	if err := h.client.List(ctx, list, client.MatchingLabels{clusterprofile.LabelClusterManager: h.managerName}); err != nil {
		return nil, fmt.Errorf("listing ClusterProfiles: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return list.Items, nil
}

// differences lists how the profiles on the hub differ from the scenario.
func (s *scenario) differences(profiles []cpv1alpha1.ClusterProfile, managerName string) []string {
	var out []string
	present := map[types.NamespacedName]bool{}
	for i := range profiles {
		p := &profiles[i]
		key := client.ObjectKeyFromObject(p)
		present[key] = true
		set, wanted := s.profiles[key]
		spec := s.cluster(p.Name)
		if !wanted || spec == nil {
			out = append(out, fmt.Sprintf("%s exists; it should not", key))
			continue
		}
		out = append(out, profileDifferences(p, spec, set, managerName)...)
	}
	for _, key := range sortedKeys(s.profiles) {
		if !present[key] {
			out = append(out, fmt.Sprintf("%s is missing", key))
		}
	}
	return out
}

// profileDifferences compares one profile with the cluster it mirrors.
func profileDifferences(p *cpv1alpha1.ClusterProfile, spec *clusterSpec, set, managerName string) []string {
	var out []string
	check := func(field, got, want string) {
		if got != want {
			out = append(out, fmt.Sprintf("%s/%s: %s is %q, want %q", p.Namespace, p.Name, field, got, want))
		}
	}
	check("label "+clusterprofile.LabelClusterSet, p.Labels[clusterprofile.LabelClusterSet], set)
	check("label "+clusterprofile.LabelClusterName, p.Labels[clusterprofile.LabelClusterName], spec.name)
	check("label "+clusterprofile.LabelClusterManager, p.Labels[clusterprofile.LabelClusterManager], managerName)
	check("spec.displayName", p.Spec.DisplayName, spec.name)
	check("spec.clusterManager.name", p.Spec.ClusterManager.Name, managerName)
	check("status.version.kubernetes", p.Status.Version.Kubernetes, spec.version)
	check("status.properties", propertiesText(p.Status.Properties), claimsAsPropertiesText(spec.claims))
	check("condition "+cpv1alpha1.ClusterConditionControlPlaneHealthy,
		conditionText(meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)),
		conditionText(&spec.available))
	check("condition "+clusterprofile.ConditionJoined,
		conditionStatus(p.Status.Conditions, clusterprofile.ConditionJoined), string(metav1.ConditionTrue))
	return out
}

func propertiesText(properties []cpv1alpha1.Property) string {
	parts := make([]string, 0, len(properties))
	for _, p := range properties {
		parts = append(parts, p.Name+"="+p.Value)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func claimsAsPropertiesText(claims []clusterv1.ManagedClusterClaim) string {
	properties := make([]cpv1alpha1.Property, 0, len(claims))
	for _, c := range claims {
		properties = append(properties, cpv1alpha1.Property{Name: c.Name, Value: c.Value})
	}
	return propertiesText(properties)
}

// conditionText is a condition's status, reason and message; "" when absent.
func conditionText(c *metav1.Condition) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s (%s: %s)", c.Status, c.Reason, c.Message)
}

func conditionStatus(conditions []metav1.Condition, conditionType string) string {
	if c := meta.FindStatusCondition(conditions, conditionType); c != nil {
		return string(c.Status)
	}
	return ""
}

func sortedKeys(m map[types.NamespacedName]string) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}
