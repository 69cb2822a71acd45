// Package coexistence keeps this project's writers from fighting OCM's own.
//
// OCM's registration hub ships a ClusterProfile mirror behind its
// `ClusterProfile` feature gate. It writes with JSON merge patches that
// replace whole lists, so if both mirrors wrote, each would undo the other on
// every change. The Guard detects the built-in one through the ClusterManager
// resource and tells the mirror to stay passive while it is on; a Guard of
// another BuiltIn does the same for another capability (the placement
// controller's own PlacementDecision writer). The twins (TwinWatch) are the
// add-ons' writers, detected from their Deployments.
package coexistence

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
)

const (
	// BuiltInGate is the registration hub's feature gate for its own mirror.
	BuiltInGate = "ClusterProfile"
	// PlacementDecisionGate is OCM's placement controller's feature gate
	// for its own writer of Cluster Inventory PlacementDecisions (after OCM
	// v1.2.0), set in the ClusterManager's placementConfiguration.
	PlacementDecisionGate = "SIGPlacementDecision"

	// MirrorCapability names the mirror in the yielding_to_upstream metric.
	MirrorCapability = "mirror"

	ReasonBuiltInMirrorEnabled  = "BuiltInClusterProfileMirrorEnabled"
	ReasonBuiltInMirrorDisabled = "BuiltInClusterProfileMirrorDisabled"
)

// BuiltIn is one of OCM's own writers that a ClusterManager turns on, to
// which one of this manager's capabilities yields, and how that capability
// reports the switch.
type BuiltIn struct {
	// Capability names the yielding capability in the
	// yielding_to_upstream metric.
	Capability string
	// Enables tells whether a ClusterManager turns the writer on.
	Enables func(*operatorv1.ClusterManager) bool
	// On is logged, and recorded on the ClusterManager that turns the writer
	// on; Off, on every ClusterManager once none does.
	On, Off Report
	// Action is the Events' action.
	Action string
	// Gauge, if set, is the capability's own gauge of the switch.
	Gauge func(on bool)
}

// Report is what a switch is logged and recorded as.
type Report struct {
	Log    string
	Reason string
	Note   string
}

// BuiltInMirror is the registration hub's own ClusterProfile mirror.
var BuiltInMirror = BuiltIn{
	Capability: MirrorCapability,
	Enables:    EnablesBuiltInMirror,
	On: Report{
		Log: "OCM's built-in ClusterProfile mirror is enabled (ClusterManager spec.registrationConfiguration.featureGates " +
			"has ClusterProfile=Enable); this mirror stays passive and writes nothing until it is disabled. Enable only one of them.",
		Reason: ReasonBuiltInMirrorEnabled,
		Note:   "The registration hub's ClusterProfile gate is enabled; clusterprofile-manager stays passive until it is disabled",
	},
	Off: Report{
		Log:    "OCM's built-in ClusterProfile mirror is not enabled; this mirror is active",
		Reason: ReasonBuiltInMirrorDisabled,
		Note:   "The registration hub's ClusterProfile gate is off; clusterprofile-manager mirrors ClusterProfiles",
	},
	Action: "Coexistence",
	Gauge:  metrics.SetMirrorPassive,
}

// Guard answers whether a capability must stay passive: whether a
// ClusterManager turns on the built-in writer it yields to.
type Guard struct {
	// Reader lists ClusterManagers; nil when that API is not served (no OCM
	// operator), in which case there is nothing to detect.
	Reader   client.Reader
	Recorder events.EventRecorder
	// BuiltIn is the writer yielded to; nil: OCM's built-in mirror.
	BuiltIn *BuiltIn
	// passive holds the last answer, to report each change once.
	passive atomic.Bool
}

// NewGuard is the mirror's guard of a manager: it reads ClusterManagers
// from the cache when their API is served (OCM's operator is installed),
// and otherwise has nothing to detect.
func NewGuard(mgr ctrl.Manager) *Guard {
	g := &Guard{Recorder: eventnote.Truncating(mgr.GetEventRecorder("clusterprofile-coexistence"))}
	if capability.APIServed(mgr.GetRESTMapper(), schema.GroupVersion(operatorv1.GroupVersion).WithKind("ClusterManager")) {
		g.Reader = mgr.GetClient()
	} else {
		mgr.GetLogger().WithName("coexistence").Info("ClusterManager API not served; not checking for OCM's built-in ClusterProfile mirror")
	}
	return g
}

func (g *Guard) builtIn() *BuiltIn {
	if g.BuiltIn == nil {
		return &BuiltInMirror
	}
	return g.BuiltIn
}

// Passive tells whether a ClusterManager enables the built-in writer.
func (g *Guard) Passive(ctx context.Context) (bool, error) {
	if g == nil || g.Reader == nil {
		return false, nil
	}
	managers := &operatorv1.ClusterManagerList{}
	if err := g.Reader.List(ctx, managers); err != nil {
		return false, fmt.Errorf("listing ClusterManagers: %w", err)
	}
	builtIn := g.builtIn()
	var enabledBy *operatorv1.ClusterManager
	for i := range managers.Items {
		if builtIn.Enables(&managers.Items[i]) {
			enabledBy = &managers.Items[i]
			break
		}
	}
	passive := enabledBy != nil
	if g.passive.Swap(passive) != passive {
		g.report(ctx, enabledBy, managers)
	}
	if builtIn.Gauge != nil {
		builtIn.Gauge(passive)
	}
	metrics.SetYieldingToUpstream(builtIn.Capability, passive)
	return passive, nil
}

func (g *Guard) report(ctx context.Context, enabledBy *operatorv1.ClusterManager, managers *operatorv1.ClusterManagerList) {
	log, builtIn := ctrl.LoggerFrom(ctx), g.builtIn()
	if enabledBy != nil {
		log.Info(builtIn.On.Log, "clusterManager", enabledBy.Name)
		g.event(enabledBy, corev1.EventTypeWarning, builtIn.On)
		return
	}
	log.Info(builtIn.Off.Log)
	for i := range managers.Items {
		g.event(&managers.Items[i], corev1.EventTypeNormal, builtIn.Off)
	}
}

func (g *Guard) event(obj runtime.Object, eventType string, r Report) {
	if g.Recorder != nil {
		g.Recorder.Eventf(obj, nil, eventType, r.Reason, g.builtIn().Action, "%s", r.Note)
	}
}

// EnablesBuiltInMirror tells whether a ClusterManager turns on the
// registration hub's ClusterProfile gate.
func EnablesBuiltInMirror(cm *operatorv1.ClusterManager) bool {
	if !cm.DeletionTimestamp.IsZero() || cm.Spec.RegistrationConfiguration == nil {
		return false
	}
	return enables(cm.Spec.RegistrationConfiguration.FeatureGates, BuiltInGate)
}

// EnablesBuiltInPlacementDecisions tells whether a ClusterManager turns on
// the placement controller's own writer of Cluster Inventory
// PlacementDecisions (PlacementDecisionGate).
func EnablesBuiltInPlacementDecisions(cm *operatorv1.ClusterManager) bool {
	if !cm.DeletionTimestamp.IsZero() || cm.Spec.PlacementConfiguration == nil {
		return false
	}
	return enables(cm.Spec.PlacementConfiguration.FeatureGates, PlacementDecisionGate)
}

func enables(gates []operatorv1.FeatureGate, feature string) bool {
	for _, gate := range gates {
		if gate.Feature == feature && gate.Mode == operatorv1.FeatureGateModeTypeEnable {
			return true
		}
	}
	return false
}
