package agent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// The control plane components the agent judges from their leader-election
// Leases, in the order messages name them.
const (
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	// LeaseNamespace holds both Leases; each is named after its component.
	LeaseNamespace = "kube-system"
)

// LeaseComponents are the components judged from their Leases.
var LeaseComponents = []string{ControllerManager, Scheduler}

// ControlPlaneCondition is KEP-4322's ControlPlaneHealthy: the API server's
// readiness (etcd included) and a fresh leader Lease for the controller-manager
// and the scheduler. leases maps a component to its Lease; a missing (or nil)
// entry means the Lease does not exist, as on managed control planes (EKS,
// GKE), which makes that component unobserved rather than unhealthy. The
// condition has no transition time; PlanConditions sets it.
func ControlPlaneCondition(readyz ReadyzResult, leases map[string]*coordinationv1.Lease, now time.Time, staleAfter time.Duration) metav1.Condition {
	var failing, unobserved []string
	switch {
	case !readyz.Observed:
		unobserved = append(unobserved, "API server ("+readyz.Problem+")")
	case !readyz.Ready && len(readyz.Failed) == 0:
		failing = append(failing, "API server not ready")
	case !readyz.Ready:
		failing = append(failing, "API server readyz checks "+strings.Join(readyz.Failed, ", "))
	}
	for _, component := range LeaseComponents {
		lease := leases[component]
		switch {
		case lease == nil:
			unobserved = append(unobserved, fmt.Sprintf("%s (no Lease %s/%s)", component, LeaseNamespace, component))
		case lease.Spec.RenewTime == nil:
			failing = append(failing, component+" (leader Lease never renewed)")
		case now.Sub(lease.Spec.RenewTime.Time) > staleAfter:
			// The renew time, not the age, keeps the message stable from one
			// period to the next, so a stale Lease costs one write, not one per period.
			failing = append(failing, fmt.Sprintf("%s (leader Lease last renewed %s, stale after %s)",
				component, lease.Spec.RenewTime.UTC().Format(time.RFC3339), staleAfter))
		}
	}
	c := metav1.Condition{Type: agentapi.ConditionControlPlaneHealthy}
	notObserved := ""
	if len(unobserved) > 0 {
		notObserved = "Not observed: " + strings.Join(unobserved, "; ")
	}
	switch {
	case len(failing) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, agentapi.ReasonAgentChecksFailed
		c.Message = joinSentences("Failing: "+strings.Join(failing, "; "), notObserved)
	case len(unobserved) == 1+len(LeaseComponents):
		// Nothing was observed: claiming health would be a guess.
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, agentapi.ReasonAgentChecksPartiallyObserved, notObserved
	case len(unobserved) > 0:
		c.Status, c.Reason = metav1.ConditionTrue, agentapi.ReasonAgentChecksPartiallyObserved
		c.Message = joinSentences(observedHealthy(readyz, leases), notObserved)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed
		c.Message = observedHealthy(readyz, leases)
	}
	return c
}

// observedHealthy names what was observed healthy, for a True condition.
func observedHealthy(readyz ReadyzResult, leases map[string]*coordinationv1.Lease) string {
	var healthy []string
	switch {
	case readyz.Observed && slices.Contains(readyz.Passed, "etcd"):
		healthy = append(healthy, "API server ready (etcd ok)")
	case readyz.Observed:
		healthy = append(healthy, "API server ready")
	}
	for _, component := range LeaseComponents {
		if leases[component] != nil {
			healthy = append(healthy, component+" leader Lease fresh")
		}
	}
	return strings.Join(healthy, ", ")
}

// joinSentences joins the non-empty parts of a message.
func joinSentences(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ". ")
}
