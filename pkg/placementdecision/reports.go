package placementdecision

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// namedInEvent is how many clusters of one reason an Event names.
const namedInEvent = 20

// report tells, once per change (log line, Event on the Placement), which
// chosen clusters the slices leave out and why, and when none is left out
// again; the metric sums them over Placements.
func (r *Reconciler) report(ctx context.Context, req ctrl.Request, placement *clusterv1beta1.Placement, leftOut map[string][]string) {
	hadSome := r.leftOut.set(req.String(), leftOut)
	findings := map[string]string{}
	if len(leftOut) > 0 {
		findings[ReasonClustersLeftOut] = describe(leftOut)
	}
	fresh := r.reports.Update(req.String(), findings)
	switch {
	case len(fresh) > 0:
		ctrl.LoggerFrom(ctx).Info("PlacementDecision slices leave out clusters the Placement chose", "leftOut", leftOut)
		r.event(placement, corev1.EventTypeWarning, ReasonClustersLeftOut, "The PlacementDecision slices leave out chosen clusters whose ClusterProfile "+
			"is not published in this namespace, so that every reference resolves: "+findings[ReasonClustersLeftOut])
	case len(leftOut) == 0 && hadSome:
		ctrl.LoggerFrom(ctx).Info("PlacementDecision slices reference every cluster the Placement chose")
		r.event(placement, corev1.EventTypeNormal, ReasonAllReferenced, "The PlacementDecision slices reference every cluster the Placement chose.")
	}
}

// describe names the clusters left out, by reason.
func describe(leftOut map[string][]string) string {
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(leftOut)) {
		clusters := leftOut[why]
		named := strings.Join(clusters[:min(len(clusters), namedInEvent)], ", ")
		if len(clusters) > namedInEvent {
			named += fmt.Sprintf(" and %d more", len(clusters)-namedInEvent)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", named, explain[why]))
	}
	return strings.Join(parts, "; ")
}

var explain = map[string]string{
	LeftOutUnpublished: "not published in this namespace: no binding here publishes a set that picks it, or the binding opts out",
	LeftOutNoProfile:   "published here, but its ClusterProfile is not there yet",
}

func (r *Reconciler) event(obj runtime.Object, eventType, reason, note string) {
	if r.recorder != nil && obj != nil {
		r.recorder.Eventf(obj, nil, eventType, reason, actionPublish, "%s", note)
	}
}

// leftOutCounts keeps each Placement's left-out clusters, by reason, and
// their totals, which the metric shows.
type leftOutCounts struct {
	mu          sync.Mutex
	byPlacement map[string]map[string]int
	totals      map[string]int
}

func newLeftOutCounts() *leftOutCounts {
	return &leftOutCounts{byPlacement: map[string]map[string]int{}, totals: map[string]int{}}
}

// set records the Placement's left-out clusters, updates the metric, and
// tells whether the Placement had some before.
func (c *leftOutCounts) set(placement string, leftOut map[string][]string) (hadSome bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.byPlacement[placement]
	counts := map[string]int{}
	for why, clusters := range leftOut {
		counts[why] = len(clusters)
	}
	if len(counts) == 0 {
		delete(c.byPlacement, placement)
	} else {
		c.byPlacement[placement] = counts
	}
	for _, why := range []string{LeftOutUnpublished, LeftOutNoProfile} {
		c.totals[why] += counts[why] - before[why]
		metrics.SetPlacementClustersLeftOut(why, c.totals[why])
	}
	return len(before) > 0
}

// builtInWriter is OCM's placement controller's own writer of these
// slices (a ClusterManager enables coexistence.PlacementDecisionGate): it
// names its slices after OCM's PlacementDecisions and deletes, with the
// same label, any it has no decision of that name for, so the two cannot
// write side by side. While it is on this capability writes nothing; once
// it is off, it takes the slices over in place.
var builtInWriter = coexistence.BuiltIn{
	Capability: CapabilityName,
	Enables:    coexistence.EnablesBuiltInPlacementDecisions,
	On: coexistence.Report{
		Log: "OCM's placement controller writes the PlacementDecision slices itself (ClusterManager spec.placementConfiguration.featureGates " +
			"has " + coexistence.PlacementDecisionGate + "=Enable); this capability writes nothing until it is disabled",
		Reason: coexistence.ReasonYieldingToUpstream,
		Note: "OCM's placement controller's " + coexistence.PlacementDecisionGate +
			" gate is enabled; clusterprofile-manager writes no PlacementDecision slice until it is disabled",
	},
	Off: coexistence.Report{
		Log:    "OCM's placement controller does not write PlacementDecision slices; this capability writes them",
		Reason: coexistence.ReasonTakingOver,
		Note: "OCM's placement controller's " + coexistence.PlacementDecisionGate +
			" gate is off; clusterprofile-manager writes the PlacementDecision slices",
	},
	Action: actionPublish,
}
