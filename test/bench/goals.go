package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"open-cluster-management.io/clusterprofile-bundle/pkg/placementdecision"
)

// Scale III's goals (docs/performance.md): with the chart's defaults, at
// 35,000 profiles and 35,000 token copies with every capability on.
const (
	goalPeakRSSMiB     = 256.0
	goalRatioToFloor   = 1.10
	goalPropagationP99 = 100.0 // ms
)

// goal is one row of the goals: the figure the run measured, what it must
// be, and whether it is.
type goal struct {
	Row  string `json:"row"`
	Got  string `json:"got"`
	Want string `json:"want"`
	Met  bool   `json:"met"`
}

// scaleGoals checks the run's figures against Scale III's goals. A figure
// the run did not measure (its phase skipped, its process gone) misses its
// goal: a check that cannot be made is not a pass.
func scaleGoals(r *results) []goal {
	var goals []goal
	check := func(row, want string, measured bool, figure func() (got string, met bool)) {
		g := goal{Row: row, Got: "not measured", Want: want}
		if measured {
			g.Got, g.Met = figure()
		}
		goals = append(goals, g)
	}
	for _, process := range []string{"cold", "restarted"} {
		m := r.process(process)
		check("peak RSS, "+process, fmt.Sprintf("< %.0f MiB", goalPeakRSSMiB), m != nil, func() (string, bool) {
			return fmt.Sprintf("%.0f MiB", m.PeakRSSMiB), m.PeakRSSMiB < goalPeakRSSMiB
		})
	}
	c, cold := r.Cold, r.Cold != nil && r.Floor != nil
	check("cold convergence / floor", fmt.Sprintf("≤ %.2f×", goalRatioToFloor), cold, func() (string, bool) {
		return fmt.Sprintf("%.2f×", c.RatioToFloor), c.RatioToFloor <= goalRatioToFloor
	})
	if cold {
		floor := float64(r.Floor.Requests) / float64(r.Profiles)
		check("writes per profile", fmt.Sprintf("%.2f, the floor's", floor), true, func() (string, bool) {
			return fmt.Sprintf("%.2f", c.WritesPerProfile), c.WritesPerProfile <= floor
		})
		if r.TokenCopies > 0 {
			check("writes per token copy", "1.00", true, func() (string, bool) {
				return fmt.Sprintf("%.2f", c.CopyWritesPerCopy), c.CopyWritesPerCopy <= 1
			})
		}
	}
	for _, k := range ownedKinds {
		if !r.gateOn(k.gate) {
			continue
		}
		o := c.owned(k.gate)
		check("writes per "+k.kind, "1.00", cold && o != nil, func() (string, bool) {
			return fmt.Sprintf("%.2f (%d writes, %d objects)", o.WritesPerObject, o.Writes, o.Objects), o.exact()
		})
	}
	p := r.Propagation
	check("condition change → every profile of the cluster, p99", fmt.Sprintf("≤ %.0f ms", goalPropagationP99), p != nil, func() (string, bool) {
		return fmt.Sprintf("%.0f ms", p.P99Millis), p.P99Millis <= goalPropagationP99
	})
	i := r.Idle
	check("writes while idle", "0", i != nil, func() (string, bool) { return fmt.Sprint(i.Writes.Total), i.Writes.Total == 0 })
	s := r.Restart
	check("writes during a restart's resync", "0", s != nil, func() (string, bool) { return fmt.Sprint(s.Writes.Total), s.Writes.Total == 0 })
	budget, over := r.restartKeyBudget()
	want := "one per cluster per controller and one per Placement"
	if s != nil {
		want = fmt.Sprintf("≤ %d, %s", budget, want)
	}
	check("keys queued by a restart", want, s != nil, func() (string, bool) {
		if len(over) > 0 {
			return fmt.Sprintf("%d (over: %s)", s.KeysQueued, strings.Join(over, ", ")), false
		}
		return fmt.Sprint(s.KeysQueued), s.KeysQueued <= budget
	})
	return goals
}

// restartKeyBudget is what a restart may queue, and the queues that took
// more than their share: one key per cluster for each controller (the
// mirror, the access providers and the syncer key by cluster; MultiKueue
// and Argo CD by profile in their one namespace), one per Placement (one
// per namespace here) for the PlacementDecision slices. For the five
// capabilities the figure ran, that is 14,000 at 35,000 profiles,
// within its 15,000.
func (r *results) restartKeyBudget() (int, []string) {
	if r.Restart == nil {
		return 0, nil
	}
	budget, over := 0, []string{}
	for _, queue := range slices.Sorted(maps.Keys(r.Restart.KeysByController)) {
		if r.Restart.KeysByController[queue] == 0 {
			continue // a queue the restart gave nothing (a webhook's, an addon's) takes no share
		}
		share := r.Clusters
		if queue == placementdecision.ControllerName {
			share = r.Namespaces
		}
		budget += share
		if keys := r.Restart.KeysByController[queue]; keys > share {
			over = append(over, fmt.Sprintf("%s %d > %d", queue, keys, share))
		}
	}
	return budget, over
}

// gateOn tells whether the run turned the capability on.
func (r *results) gateOn(gate string) bool { return slices.Contains(strings.Split(r.Gates, "+"), gate) }

// owned is the cold start's writes of the objects the gate's capability
// owns; nil when not measured.
func (c *coldResult) owned(gate string) *ownedResult {
	if c == nil {
		return nil
	}
	for i := range c.Owned {
		if c.Owned[i].Gate == gate {
			return &c.Owned[i]
		}
	}
	return nil
}

// process is the memory of the named manager process, or nil.
func (r *results) process(name string) *processMemory {
	for i := range r.Memory {
		if r.Memory[i].Process == name {
			return &r.Memory[i]
		}
	}
	return nil
}

// missedGoals names the rows that missed, one line each.
func missedGoals(goals []goal) string {
	var missed []string
	for _, g := range goals {
		if !g.Met {
			missed = append(missed, fmt.Sprintf("missed goal %q: %s, want %s", g.Row, g.Got, g.Want))
		}
	}
	return strings.Join(missed, "\n")
}

// printGoals prints the goal rows with their verdicts.
func printGoals(t table, goals []goal) {
	if len(goals) == 0 {
		return
	}
	t.section("Goals (Scale III, docs/performance.md)")
	for _, g := range goals {
		t.row(g.Row, g.Got, verdict(g.Met, g.Want))
	}
}
