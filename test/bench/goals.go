package main

import (
	"fmt"
	"strings"
)

// Scale III's goals (docs/performance.md): with the chart's defaults, at
// 35,000 profiles and 35,000 token copies with every capability on.
const (
	goalPeakRSSMiB      = 256.0
	goalRatioToFloor    = 1.10
	goalPropagationP99  = 100.0 // ms
	goalRestartKeysEach = 15000
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
	add := func(row, got, want string, met bool) {
		goals = append(goals, goal{Row: row, Got: got, Want: want, Met: met})
	}
	rss := fmt.Sprintf("< %.0f MiB", goalPeakRSSMiB)
	for _, process := range []string{"cold", "restarted"} {
		m := r.process(process)
		if m == nil {
			add("peak RSS, "+process, "not measured", rss, false)
			continue
		}
		add("peak RSS, "+process, fmt.Sprintf("%.0f MiB", m.PeakRSSMiB), rss, m.PeakRSSMiB < goalPeakRSSMiB)
	}
	if c := r.Cold; c != nil && r.Floor != nil {
		add("cold convergence / floor", fmt.Sprintf("%.2f×", c.RatioToFloor), fmt.Sprintf("≤ %.2f×", goalRatioToFloor), c.RatioToFloor <= goalRatioToFloor)
		floor := float64(r.Floor.Requests) / float64(r.Profiles)
		add("writes per profile", fmt.Sprintf("%.2f", c.WritesPerProfile), fmt.Sprintf("%.2f, the floor's", floor), c.WritesPerProfile <= floor)
		if r.TokenCopies > 0 {
			add("writes per token copy", fmt.Sprintf("%.2f", c.CopyWritesPerCopy), "1.00", c.CopyWritesPerCopy <= 1)
		}
	} else {
		add("cold convergence / floor", "not measured", fmt.Sprintf("≤ %.2f×", goalRatioToFloor), false)
	}
	if p := r.Propagation; p != nil {
		add("condition change → every profile of the cluster, p99", fmt.Sprintf("%.0f ms", p.P99Millis),
			fmt.Sprintf("≤ %.0f ms", goalPropagationP99), p.P99Millis <= goalPropagationP99)
	} else {
		add("condition change → every profile of the cluster, p99", "not measured", fmt.Sprintf("≤ %.0f ms", goalPropagationP99), false)
	}
	if i := r.Idle; i != nil {
		add("writes while idle", fmt.Sprint(i.Writes.Total), "0", i.Writes.Total == 0)
	}
	if s := r.Restart; s != nil {
		add("writes during a restart's resync", fmt.Sprint(s.Writes.Total), "0", s.Writes.Total == 0)
		add("keys queued by a restart", fmt.Sprint(s.Reconciles), fmt.Sprintf("≤ %d", goalRestartKeysEach), s.Reconciles <= goalRestartKeysEach)
	} else {
		add("keys queued by a restart", "not measured", fmt.Sprintf("≤ %d", goalRestartKeysEach), false)
	}
	return goals
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
