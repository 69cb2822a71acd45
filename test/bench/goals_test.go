package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// metGoals is a run at 35,000 profiles that meets every goal.
func metGoals() *results {
	return &results{
		Profiles: 35000, TokenCopies: 35000,
		Floor: &floorResult{Requests: 5 * 35000},
		Cold:  &coldResult{RatioToFloor: 1.08, WritesPerProfile: 5, CopyWritesPerCopy: 1},
		Idle:  &idleResult{}, Restart: &restartResult{Reconciles: 14000},
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
		"a write too many": {change: func(r *results) { r.Cold.WritesPerProfile = 5.01; r.Cold.CopyWritesPerCopy = 1.01 },
			missed: []string{`missed goal "writes per profile": 5.01, want 5.00, the floor's`, `missed goal "writes per token copy": 1.01, want 1.00`}},
		"propagation": {change: func(r *results) { r.Propagation.P99Millis = 101 },
			missed: []string{`missed goal "condition change → every profile of the cluster, p99": 101 ms, want ≤ 100 ms`}},
		"no idle or restart phase": {change: func(r *results) { r.Idle, r.Restart = nil, nil },
			missed: []string{`missed goal "writes while idle": not measured, want 0`, `missed goal "writes during a restart's resync": not measured, want 0`,
				`missed goal "keys queued by a restart": not measured, want ≤ 15000`}},
		"idle and restart writes, keys": {change: func(r *results) {
			r.Idle.Writes.Total, r.Restart.Writes.Total, r.Restart.Reconciles = 1, 2, 108500
		}, missed: []string{`missed goal "writes while idle": 1, want 0`, `missed goal "writes during a restart's resync": 2, want 0`,
			`missed goal "keys queued by a restart": 108500, want ≤ 15000`}},
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
