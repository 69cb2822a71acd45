// Package coexistence keeps this project's mirror from fighting OCM's own.
//
// OCM's registration hub ships a ClusterProfile mirror behind its
// `ClusterProfile` feature gate. It writes with JSON merge patches that
// replace whole lists, so if both mirrors wrote, each would undo the other on
// every change. The Guard detects the built-in one through the ClusterManager
// resource and tells the mirror to stay passive while it is on.
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

// Guard answers whether the mirror must stay passive.
type Guard struct {
	// Reader lists ClusterManagers; nil when that API is not served (no OCM
	// operator), in which case there is nothing to detect.
	Reader   client.Reader
	Recorder events.EventRecorder
	// passive holds the last answer, to report each change once.
	passive atomic.Bool
}

// NewGuard is the guard of a manager: it reads ClusterManagers from the
// cache when their API is served (OCM's operator is installed), and
// otherwise has nothing to detect.
func NewGuard(mgr ctrl.Manager) *Guard {
	g := &Guard{Recorder: eventnote.Truncating(mgr.GetEventRecorder("clusterprofile-coexistence"))}
	if capability.APIServed(mgr.GetRESTMapper(), schema.GroupVersion(operatorv1.GroupVersion).WithKind("ClusterManager")) {
		g.Reader = mgr.GetClient()
	} else {
		mgr.GetLogger().WithName("coexistence").Info("ClusterManager API not served; not checking for OCM's built-in ClusterProfile mirror")
	}
	return g
}

// Passive tells whether a ClusterManager enables the built-in mirror.
func (g *Guard) Passive(ctx context.Context) (bool, error) {
	if g == nil || g.Reader == nil {
		return false, nil
	}
	managers := &operatorv1.ClusterManagerList{}
	if err := g.Reader.List(ctx, managers); err != nil {
		return false, fmt.Errorf("listing ClusterManagers: %w", err)
	}
	var enabledBy *operatorv1.ClusterManager
	for i := range managers.Items {
		if EnablesBuiltInMirror(&managers.Items[i]) {
			enabledBy = &managers.Items[i]
			break
		}
	}
	passive := enabledBy != nil
	if g.passive.Swap(passive) != passive {
		g.report(ctx, enabledBy, managers)
	}
	metrics.SetMirrorPassive(passive)
	metrics.SetYieldingToUpstream(MirrorCapability, passive)
	return passive, nil
}

func (g *Guard) report(ctx context.Context, enabledBy *operatorv1.ClusterManager, managers *operatorv1.ClusterManagerList) {
	log := ctrl.LoggerFrom(ctx)
	if enabledBy != nil {
		log.Info("OCM's built-in ClusterProfile mirror is enabled (ClusterManager spec.registrationConfiguration.featureGates "+
			"has ClusterProfile=Enable); this mirror stays passive and writes nothing until it is disabled. Enable only one of them.",
			"clusterManager", enabledBy.Name)
		g.event(enabledBy, corev1.EventTypeWarning, ReasonBuiltInMirrorEnabled,
			"The registration hub's ClusterProfile gate is enabled; clusterprofile-manager stays passive until it is disabled")
		return
	}
	log.Info("OCM's built-in ClusterProfile mirror is not enabled; this mirror is active")
	for i := range managers.Items {
		g.event(&managers.Items[i], corev1.EventTypeNormal, ReasonBuiltInMirrorDisabled,
			"The registration hub's ClusterProfile gate is off; clusterprofile-manager mirrors ClusterProfiles")
	}
}

func (g *Guard) event(obj runtime.Object, eventType, reason, note string) {
	if g.Recorder != nil {
		g.Recorder.Eventf(obj, nil, eventType, reason, "Coexistence", note)
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
