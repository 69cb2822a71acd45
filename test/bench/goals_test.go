package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// metGoals is a run at 35,000 profiles (3,500 clusters in 10 namespaces)
// that meets every goal.
func metGoals() *results {
	return &results{
		Clusters: 3500, Namespaces: 10, Profiles: 35000, TokenCopies: 35000, Gates: "mirror+proxy+direct+credsync+agent+multikueue+argocd+placementdecision",
		Floor: &floorResult{Requests: 5*35000 + 3500 + 3500 + 350},
		Cold: &coldResult{RatioToFloor: 1.08, WritesPerProfile: 5.21, CopyWritesPerCopy: 1, Owned: []ownedResult{
			{Gate: "multikueue", Objects: 3500, Writes: 3500, WritesPerObject: 1},
			{Gate: "argocd", Objects: 3500, Writes: 3500, WritesPerObject: 1},
			{Gate: "placementdecision", Objects: 350, Writes: 350, WritesPerObject: 1},
		}},
		Idle: &idleResult{}, Restart: &restartResult{Reconciles: 21010, KeysQueued: 21010, KeysByController: map[string]int{
			"clusterprofile-mirror": 3500, "clusterprofile-access-proxy": 3500, "clusterprofile-access-direct": 3500, "clusterprofile-credsync": 3500,
			"clusterprofile-multikueue": 3500, "clusterprofile-argocd": 3500, "clusterprofile-placement-decisions": 10,
			"clusterprofile-multikueue-config": 0,
		}},
		Propagation: &propagationResult{P99Millis: 90},
		Memory:      []processMemory{{Process: "cold", PeakRSSMiB: 240}, {Process: "restarted", PeakRSSMiB: 250}},
	}
}

// TestScaleGoals: a run that meets every goal passes; each figure past its
// goal, or not measured, fails, naming its row.
func TestScaleGoals(t *testing.T) {
	cases := map[string]struct {
		change func(*results)
		missed []string
	}{
		"every goal met": {change: func(*results) {}},
		"memory after a restart": {change: func(r *results) { r.Memory[1].PeakRSSMiB = 256 },
			missed: []string{`missed goal "peak RSS, restarted": 256 MiB, want < 256 MiB`}},
		"no restarted process": {change: func(r *results) { r.Memory = r.Memory[:1] },
			missed: []string{`missed goal "peak RSS, restarted": not measured, want < 256 MiB`}},
		"convergence": {change: func(r *results) { r.Cold.RatioToFloor = 1.11 },
			missed: []string{`missed goal "cold convergence / floor": 1.11×, want ≤ 1.10×`}},
		"a write too many": {change: func(r *results) { r.Cold.WritesPerProfile = 5.22; r.Cold.CopyWritesPerCopy = 1.01 },
			missed: []string{`missed goal "writes per profile": 5.22, want 5.21, the floor's`, `missed goal "writes per token copy": 1.01, want 1.00`}},
		"owned objects written again": {change: func(r *results) {
			r.Cold.Owned[1] = ownedResult{Gate: "argocd", Objects: 3500, Writes: 3542, WritesPerObject: 3542.0 / 3500}
			r.Cold.Owned[2] = ownedResult{Gate: "placementdecision", Objects: 350, Writes: 4637, WritesPerObject: 4637.0 / 350}
		}, missed: []string{`missed goal "writes per Argo CD cluster Secret": 1.01 (3542 writes, 3500 objects), want 1.00`,
			`missed goal "writes per PlacementDecision slice": 13.25 (4637 writes, 350 objects), want 1.00`}},
		"owned objects not all written": {change: func(r *results) {
			r.Cold.Owned[0] = ownedResult{Gate: "multikueue", Objects: 3500, Writes: 3499, WritesPerObject: 3499.0 / 3500}
		}, missed: []string{`missed goal "writes per MultiKueueCluster": 1.00 (3499 writes, 3500 objects), want 1.00`}},
		"a capability's writes not measured": {change: func(r *results) { r.Cold.Owned = r.Cold.Owned[1:] },
			missed: []string{`missed goal "writes per MultiKueueCluster": not measured, want 1.00`}},
		"the capabilities that own objects off": {change: func(r *results) {
			r.Gates, r.Cold.Owned = "mirror+proxy+direct+credsync+agent", nil
		}},
		"no cold start": {change: func(r *results) { r.Cold = nil },
			missed: []string{`missed goal "cold convergence / floor": not measured, want ≤ 1.10×`,
				`missed goal "writes per MultiKueueCluster": not measured, want 1.00`,
				`missed goal "writes per Argo CD cluster Secret": not measured, want 1.00`,
				`missed goal "writes per PlacementDecision slice": not measured, want 1.00`}},
		"propagation": {change: func(r *results) { r.Propagation.P99Millis = 101 },
			missed: []string{`missed goal "condition change → every profile of the cluster, p99": 101 ms, want ≤ 100 ms`}},
		"no idle or restart phase": {change: func(r *results) { r.Idle, r.Restart = nil, nil },
			missed: []string{`missed goal "writes while idle": not measured, want 0`, `missed goal "writes during a restart's resync": not measured, want 0`,
				`missed goal "keys queued by a restart": not measured, want one per cluster per controller and one per Placement`}},
		"idle and restart writes": {change: func(r *results) { r.Idle.Writes.Total, r.Restart.Writes.Total = 1, 2 },
			missed: []string{`missed goal "writes while idle": 1, want 0`, `missed goal "writes during a restart's resync": 2, want 0`}},
		"a controller keyed by profile across namespaces": {change: func(r *results) {
			r.Restart.KeysByController["clusterprofile-argocd"], r.Restart.KeysQueued = 35000, 52510
		}, missed: []string{`missed goal "keys queued by a restart": 52510 (over: clusterprofile-argocd 35000 > 3500), want ≤ 21010, one per cluster per controller and one per Placement`}},
		"a Placement queued twice": {change: func(r *results) {
			r.Restart.KeysByController["clusterprofile-placement-decisions"], r.Restart.KeysQueued = 20, 21020
		}, missed: []string{`missed goal "keys queued by a restart": 21020 (over: clusterprofile-placement-decisions 20 > 10), want ≤ 21010, one per cluster per controller and one per Placement`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := metGoals()
			tc.change(r)
			var missed []string
			if text := missedGoals(scaleGoals(r)); text != "" {
				missed = strings.Split(text, "\n")
			}
			if diff := cmp.Diff(tc.missed, missed); diff != "" {
				t.Errorf("missed goals (-want +got):\n%s", diff)
			}
		})
	}
}
