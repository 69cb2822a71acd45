package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// results are the benchmark's figures; a phase that did not run is nil.
type results struct {
	Machine    machineInfo `json:"machine"`
	Clusters   int         `json:"clusters"`
	Namespaces int         `json:"namespaces"`
	Profiles   int         `json:"profiles"`
	// QPS is the client QPS of the manager and the floor; -1 is unthrottled.
	QPS     float64 `json:"qps"`
	Burst   int     `json:"burst,omitempty"`
	Workers int     `json:"workers"`

	Floor       *floorResult       `json:"floor,omitempty"`
	Cold        *coldResult        `json:"cold,omitempty"`
	Idle        *idleResult        `json:"idle,omitempty"`
	Restart     *restartResult     `json:"restart,omitempty"`
	Propagation *propagationResult `json:"propagation,omitempty"`
	Deletion    *deletionResult    `json:"deletion,omitempty"`
	// Memory has one entry per manager process, in start order.
	Memory []processMemory `json:"memory,omitempty"`
	// ManagerLogs is the directory holding the manager logs.
	ManagerLogs string `json:"managerLogs,omitempty"`
}

type machineInfo struct {
	CPUs int    `json:"cpus"`
	OS   string `json:"os"`
	Arch string `json:"arch"`
	Go   string `json:"go"`
}

type floorResult struct {
	Seconds           float64 `json:"seconds"`
	Requests          int     `json:"requests"`
	RequestsPerSecond float64 `json:"requestsPerSecond"`
}

type coldResult struct {
	// The times run from the manager's process start; until the first
	// profile it is starting up (caches, informers).
	FirstProfileSeconds float64 `json:"firstProfileSeconds"`
	AllExistSeconds     float64 `json:"allExistSeconds"`
	AllCompleteSeconds  float64 `json:"allCompleteSeconds"`
	QuietSeconds        float64 `json:"quietSeconds"`
	RatioToFloor        float64 `json:"ratioToFloor"`
	// RatioToFloorAfterStartup leaves the start-up out: from the first
	// profile until all are complete, over the floor.
	RatioToFloorAfterStartup float64     `json:"ratioToFloorAfterStartup"`
	Reconciles               int         `json:"reconciles"`
	Writes                   writeCounts `json:"writes"`
	WritesPerProfile         float64     `json:"writesPerProfile"`
}

type idleResult struct {
	Seconds    float64     `json:"seconds"`
	Reconciles int         `json:"reconciles"`
	Writes     writeCounts `json:"writes"`
}

type restartResult struct {
	ShutdownSeconds float64 `json:"shutdownSeconds"`
	CleanExit       bool    `json:"cleanExit"`
	ExitError       string  `json:"exitError,omitempty"`
	// ResyncSeconds runs from the new process's start until it settled.
	ResyncSeconds float64     `json:"resyncSeconds"`
	Reconciles    int         `json:"reconciles"`
	Writes        writeCounts `json:"writes"`
}

type propagationResult struct {
	Samples                 int         `json:"samples"`
	ChangedProfiles         int         `json:"changedProfiles"`
	P50Millis               float64     `json:"p50Millis"`
	P99Millis               float64     `json:"p99Millis"`
	MaxMillis               float64     `json:"maxMillis"`
	Writes                  writeCounts `json:"writes"`
	WritesPerChangedProfile float64     `json:"writesPerChangedProfile"`
}

type deletionResult struct {
	Namespace string      `json:"namespace"`
	Profiles  int         `json:"profiles"`
	Seconds   float64     `json:"seconds"`
	Writes    writeCounts `json:"writes"`
}

type processMemory struct {
	Process         string  `json:"process"`
	PeakRSSMiB      float64 `json:"peakRSSMiB"`
	PeakHeapMiB     float64 `json:"peakHeapMiB"`
	ShutdownSeconds float64 `json:"shutdownSeconds"`
	CleanExit       bool    `json:"cleanExit"`
	ExitError       string  `json:"exitError,omitempty"`
}

func newResults(cfg config) *results {
	r := &results{
		Machine:  machineInfo{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()},
		Clusters: cfg.clusters, Namespaces: cfg.namespaces, Profiles: cfg.clusters * cfg.namespaces,
		QPS: -1, Workers: cfg.workers,
	}
	if !cfg.unthrottled() {
		r.QPS, r.Burst = cfg.qps, cfg.burst
	}
	return r
}

func writeJSON(path string, res *results) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// table prints the final report: sections of label, value and target.
type table struct{ w io.Writer }

func (t table) section(name string) { fmt.Fprintf(t.w, "%s\n", name) }

func (t table) row(label, value, target string) {
	if target != "" {
		value += "   [" + target + "]"
	}
	fmt.Fprintf(t.w, "  %-28s %s\n", label, value)
}

// printReport prints every figure measured, with the targets they are held to.
func printReport(out io.Writer, r *results) {
	if r == nil {
		return
	}
	t := table{out}
	fmt.Fprintln(t.w)
	t.section("ClusterProfile mirror benchmark")
	t.row("machine", fmt.Sprintf("%d CPUs, %s/%s, %s", r.Machine.CPUs, r.Machine.OS, r.Machine.Arch, r.Machine.Go), "")
	t.row("clusters × namespaces", fmt.Sprintf("%d × %d = %d profiles", r.Clusters, r.Namespaces, r.Profiles), "")
	qps := "unthrottled"
	if r.QPS > 0 {
		qps = fmt.Sprintf("%g (burst %d)", r.QPS, r.Burst)
	}
	t.row("client QPS / mirror workers", fmt.Sprintf("%s / %d", qps, r.Workers), "")
	printConvergence(t, r)
	printChanges(t, r)
}

// printConvergence prints the floor, the cold start, idle time and the
// restart resync.
func printConvergence(t table, r *results) {
	if f := r.Floor; f != nil {
		t.section("Floor (API server, same writes, 16 workers)")
		t.row("time", fmt.Sprintf("%s (%d requests, %.0f/s)", formatSeconds(f.Seconds), f.Requests, f.RequestsPerSecond), "")
	}
	if c := r.Cold; c != nil {
		t.section("Cold convergence (from process start)")
		t.row("first profile", formatSeconds(c.FirstProfileSeconds), "")
		t.row("all profiles exist", formatSeconds(c.AllExistSeconds), "")
		t.row("all profiles complete", formatSeconds(c.AllCompleteSeconds), "")
		t.row("ours / floor", fmt.Sprintf("%.2f× (%.2f× counting from the first profile)",
			c.RatioToFloor, c.RatioToFloorAfterStartup), "")
		t.row("settled", fmt.Sprintf("%s (%d reconciles)", formatSeconds(c.QuietSeconds), c.Reconciles), "")
		t.row("writes", c.Writes.String(), "")
		t.row("writes / profile", fmt.Sprintf("%.4f", c.WritesPerProfile), verdict(c.WritesPerProfile <= 2, "≤ 2"))
	}
	if i := r.Idle; i != nil {
		t.section(fmt.Sprintf("Idle (%s after convergence)", formatSeconds(i.Seconds)))
		t.row("writes", i.Writes.String(), verdict(i.Writes.Total == 0, "0"))
		t.row("reconciles", fmt.Sprint(i.Reconciles), "")
	}
	if s := r.Restart; s != nil {
		t.section("Restart resync")
		exit := "clean"
		if !s.CleanExit {
			exit = "NOT clean: " + s.ExitError
		}
		t.row("shutdown on SIGTERM", fmt.Sprintf("%s, %s", formatSeconds(s.ShutdownSeconds), exit), verdict(s.CleanExit, "clean"))
		t.row("resync time", fmt.Sprintf("%s (%d reconciles)", formatSeconds(s.ResyncSeconds), s.Reconciles), "")
		t.row("writes", s.Writes.String(), verdict(s.Writes.Total == 0, "0"))
	}
}

// printChanges prints how changes propagate, deletion and memory.
func printChanges(t table, r *results) {
	if p := r.Propagation; p != nil {
		t.section(fmt.Sprintf("Propagation (%d clusters flipped, %d profiles)", p.Samples, p.ChangedProfiles))
		t.row("p50 / p99 / max", fmt.Sprintf("%.0fms / %.0fms / %.0fms", p.P50Millis, p.P99Millis, p.MaxMillis), "")
		t.row("writes", p.Writes.String(), "")
		t.row("writes / changed profile", fmt.Sprintf("%.4f", p.WritesPerChangedProfile), verdict(p.WritesPerChangedProfile <= 1, "1"))
	}
	if d := r.Deletion; d != nil {
		t.section(fmt.Sprintf("Deletion (binding in %s, %d profiles)", d.Namespace, d.Profiles))
		t.row("all gone", formatSeconds(d.Seconds), "")
		t.row("writes", d.Writes.String(), verdict(d.Writes.Total == d.Profiles, fmt.Sprint(d.Profiles)))
	}
	if len(r.Memory) > 0 {
		t.section("Memory (per manager process)")
		for _, m := range r.Memory {
			t.row(m.Process, fmt.Sprintf("peak RSS %.0f MiB, peak heap in use %.0f MiB", m.PeakRSSMiB, m.PeakHeapMiB), "")
		}
	}
	if r.ManagerLogs != "" {
		t.row("manager logs", r.ManagerLogs, "")
	}
}

// verdict shows a target and whether it was met.
func verdict(met bool, target string) string {
	if met {
		return "target " + target + ": ok"
	}
	return "target " + target + ": MISSED"
}

func formatSeconds(s float64) string { return formatDuration(time.Duration(s * float64(time.Second))) }

// formatDuration rounds to what a person reads: ms below a second.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}
