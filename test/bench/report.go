package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/memlimit"
)

// results are the benchmark's figures; a phase that did not run is nil.
type results struct {
	Machine    machineInfo `json:"machine"`
	Clusters   int         `json:"clusters"`
	Namespaces int         `json:"namespaces"`
	Profiles   int         `json:"profiles"`
	// Gates are the capabilities the manager ran with.
	Gates       string `json:"gates"`
	TokenCopies int    `json:"tokenCopies,omitempty"`
	// OwnedWorld says where the capabilities that own objects find what
	// they read (Kueue's and Argo CD's namespaces, the Placements).
	OwnedWorld string `json:"ownedWorld,omitempty"`
	// QPS is the client QPS of the manager and the floor; -1 is unthrottled.
	QPS     float64 `json:"qps"`
	Burst   int     `json:"burst,omitempty"`
	Workers int     `json:"workers"`
	// MemoryLimitMiB is the container memory limit the manager ran under
	// (0: none).
	MemoryLimitMiB float64 `json:"memoryLimitMiB,omitempty"`
	// GCPercent is the manager's GOGC when the run set one.
	GCPercent int `json:"gcPercent,omitempty"`
	// PeakRSSTargetMiB is the -peak-rss-target the run checked, if any.
	PeakRSSTargetMiB float64 `json:"peakRSSTargetMiB,omitempty"`

	Floor       *floorResult       `json:"floor,omitempty"`
	LoadedFloor *floorResult       `json:"loadedFloor,omitempty"` // the floor again, beside a busy loop (-floor-load)
	Cold        *coldResult        `json:"cold,omitempty"`
	Idle        *idleResult        `json:"idle,omitempty"`
	Restart     *restartResult     `json:"restart,omitempty"`
	Propagation *propagationResult `json:"propagation,omitempty"`
	Deletion    *deletionResult    `json:"deletion,omitempty"`
	// TokenRotation and CARotation run with the syncer and the proxy.
	TokenRotation *rotationResult   `json:"tokenRotation,omitempty"`
	CARotation    *caRotationResult `json:"caRotation,omitempty"`
	// Churn is the profile writes under churn, with the facts' write budget
	// and without.
	Churn *churnResult `json:"churn,omitempty"`
	// Upstream is OCM's own mirror on the same world.
	Upstream *upstreamResult `json:"upstream,omitempty"`
	// Memory has one entry per manager process, in start order.
	Memory []processMemory `json:"memory,omitempty"`
	// Goals are Scale III's rows with -goals.
	Goals []goal `json:"goals,omitempty"`
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
	// Writes says which writes each profile took.
	Writes string `json:"writes"`
	// Owned are, by gate, the writes of the objects the capabilities own.
	Owned             ownedWrites `json:"owned,omitempty"`
	Seconds           float64     `json:"seconds"`
	Requests          int         `json:"requests"`
	RequestsPerSecond float64     `json:"requestsPerSecond"`
	// CPUSeconds is what each process spent meanwhile.
	CPUSeconds cpuUse `json:"cpuSeconds,omitempty"`
	// Load is the share of a core the bench's busy loop took beside the
	// writes (0: none).
	Load float64 `json:"load,omitempty"`
	// APIServerProfileWrites and APIServerStorageWrites are the API
	// server's profile write requests and its writes of them to etcd (see
	// profileCounts).
	APIServerProfileWrites int `json:"apiServerProfileWrites"`
	APIServerStorageWrites int `json:"apiServerStorageWrites"`
	// Propagation is the floor of the propagation phase: the mirror's
	// status applies of a condition change to a cluster's profiles, sent at
	// once, until the last returns (propagationFloor).
	Propagation *latencies `json:"propagation,omitempty"`
}

type coldResult struct {
	// The times run from the manager's process start; until the first
	// profile it is starting up (caches, informers).
	FirstProfileSeconds float64 `json:"firstProfileSeconds"`
	AllExistSeconds     float64 `json:"allExistSeconds"`
	AllCompleteSeconds  float64 `json:"allCompleteSeconds"`
	// AllCopiesSeconds is when every token copy existed (with the syncer).
	AllCopiesSeconds float64 `json:"allCopiesSeconds,omitempty"`
	// ConvergedSeconds is when profiles and copies were all done: the time
	// held against the floor.
	ConvergedSeconds float64 `json:"convergedSeconds"`
	// CPUSeconds is what each process spent until then.
	CPUSeconds   cpuUse  `json:"cpuSeconds,omitempty"`
	QuietSeconds float64 `json:"quietSeconds"`
	RatioToFloor float64 `json:"ratioToFloor"`
	// RatioToFloorAfterStartup leaves the start-up out: from the first
	// profile until all are complete, over the floor.
	RatioToFloorAfterStartup float64     `json:"ratioToFloorAfterStartup"`
	Reconciles               int         `json:"reconciles"`
	Writes                   writeCounts `json:"writes"`
	WritesPerProfile         float64     `json:"writesPerProfile"`
	// APIServerProfileWrites are the ClusterProfile writes the API server
	// served meanwhile (the ruler upstream's mirror is measured with), and
	// APIServerStorageWrites its writes of them to etcd (see profileCounts).
	APIServerProfileWrites int `json:"apiServerProfileWrites"`
	APIServerStorageWrites int `json:"apiServerStorageWrites"`
	// CopyWritesPerCopy is the syncer's writes over the copies it made.
	CopyWritesPerCopy float64 `json:"copyWritesPerCopy,omitempty"`
	// Owned are the writes of the objects the capabilities own.
	Owned []ownedResult `json:"owned,omitempty"`
}

// ownedResult is one capability's writes to the objects it owns, as the
// API server counted them (its audit log).
type ownedResult struct {
	Gate            string  `json:"gate"`
	Kind            string  `json:"kind"`
	Objects         int     `json:"objects"`
	Writes          int     `json:"writes"`
	WritesPerObject float64 `json:"writesPerObject"`
	// CompleteSeconds, on a cold start, is when every object was first as
	// wanted, from the process start (the ConvergedSeconds held against the
	// floor include it).
	CompleteSeconds float64 `json:"completeSeconds,omitempty"`
	// Rewrites are the first writes of an object after its first one in
	// the phase, with what each changed.
	Rewrites []rewrite `json:"rewrites,omitempty"`
}

type idleResult struct {
	Seconds    float64       `json:"seconds"`
	Reconciles int           `json:"reconciles"`
	Writes     writeCounts   `json:"writes"`
	Owned      []ownedResult `json:"owned,omitempty"`
}

type restartResult struct {
	ShutdownSeconds float64 `json:"shutdownSeconds"`
	CleanExit       bool    `json:"cleanExit"`
	ExitError       string  `json:"exitError,omitempty"`
	// ResyncSeconds runs from the new process's start until it settled.
	ResyncSeconds float64 `json:"resyncSeconds"`
	Reconciles    int     `json:"reconciles"`
	// KeysQueued are the keys the restart queued (workqueue_adds_total),
	// KeysByController by queue: every controller's, the addon
	// framework's queues too.
	KeysQueued       int            `json:"keysQueued"`
	KeysByController map[string]int `json:"keysByController,omitempty"`
	Writes           writeCounts    `json:"writes"`
	Owned            []ownedResult  `json:"owned,omitempty"`
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

type upstreamResult struct {
	FirstProfileSeconds float64 `json:"firstProfileSeconds"`
	AllCompleteSeconds  float64 `json:"allCompleteSeconds"`
	QuietSeconds        float64 `json:"quietSeconds"`
	// OursOverUpstream is this project's cold convergence over upstream's.
	OursOverUpstream       float64    `json:"oursOverUpstream,omitempty"`
	APIServerProfileWrites int        `json:"apiServerProfileWrites"`
	WritesPerProfile       float64    `json:"writesPerProfile"`
	Propagation            *latencies `json:"propagation,omitempty"`
	UnbindSeconds          float64    `json:"unbindSeconds"`
	PeakRSSMiB             float64    `json:"peakRSSMiB"`
}

// latencies is a distribution of times.
type latencies struct {
	Samples   int     `json:"samples"`
	P50Millis float64 `json:"p50Millis"`
	P99Millis float64 `json:"p99Millis"`
	MaxMillis float64 `json:"maxMillis"`
}

type rotationResult struct {
	Tokens     int `json:"tokens"`
	Namespaces int `json:"namespaces"`
	// Single times sampled tokens rotated one at a time, each until every
	// namespace's copy carried it.
	Single *latencies `json:"single,omitempty"`
	// All rotates every token at once.
	All               *bulkRotation `json:"all,omitempty"`
	Writes            writeCounts   `json:"writes"`
	CopyWritesPerCopy float64       `json:"copyWritesPerCopy"`
}

type bulkRotation struct {
	// WriteSeconds is how long the benchmark took to write every token.
	WriteSeconds float64 `json:"writeSeconds"`
	// AllUpdatedSeconds runs from the first token write until every copy
	// carried its new token.
	AllUpdatedSeconds float64 `json:"allUpdatedSeconds"`
	// PerCopy times each copy from its token's write.
	PerCopy latencies `json:"perCopy"`
}

type caRotationResult struct {
	Profiles              int         `json:"profiles"`
	Seconds               float64     `json:"seconds"`
	Writes                writeCounts `json:"writes"`
	ProxyWritesPerProfile float64     `json:"proxyWritesPerProfile"`
	// CopyWritesPerCopy is the syncer's writes over the copies, whose
	// published-servers record carries the CA: one each, when it runs.
	CopyWritesPerCopy float64 `json:"copyWritesPerCopy,omitempty"`
	// ArgoCD is the Argo CD integration's writes of its cluster Secrets,
	// whose config carries the CA, when it uses cluster-proxy's entry.
	ArgoCD *ownedResult `json:"argoCD,omitempty"`
}

type deletionResult struct {
	Namespace string `json:"namespace"`
	Profiles  int    `json:"profiles"`
	// Copies are the token copies revoked with the profiles; Owned the
	// objects the capabilities own that go with them (the namespace's
	// slices, and its MultiKueueClusters or cluster Secrets when it is
	// Kueue's or Argo CD's).
	Copies  int         `json:"copies,omitempty"`
	Owned   int         `json:"owned,omitempty"`
	Seconds float64     `json:"seconds"`
	Writes  writeCounts `json:"writes"`
}

// churnResult is one schedule of churn run against each manager.
type churnResult struct {
	// Seconds is the schedule's length in real time, NoiseSeconds its
	// noise-only start; the schedule runs Compression× faster than a
	// fleet's clock, and the rates are per hour of the fleet's time.
	Seconds      float64 `json:"seconds"`
	NoiseSeconds float64 `json:"noiseSeconds"`
	Compression  int     `json:"compression"`
	Seed         uint64  `json:"seed"`
	// Clusters are the clusters churned, Profiles theirs.
	Clusters int `json:"clusters"`
	Profiles int `json:"profiles"`
	// BudgetPerHour is KEP-4322's: one status write per 30 s per profile.
	BudgetPerHour float64     `json:"budgetPerHour"`
	Scheduled     churnEvents `json:"scheduled"`
	Runs          []churnRun  `json:"runs"`
}

// churnRun is the schedule against one manager.
type churnRun struct {
	Mode string `json:"mode"`
	// Damped tells whether the manager ran with the facts' write budget.
	Damped       bool     `json:"damped"`
	ManagerFlags []string `json:"managerFlags"`
	// FirstPublications are the status writes of each cluster's first
	// change after the manager started (the schedule's start state), which
	// no budget holds: a new process remembers no publication. They are
	// in neither Noise nor Churn.
	FirstPublications int `json:"firstPublications"`
	// Noise is the schedule's noise-only start; Churn the whole schedule,
	// Noise included, until the manager was quiet after it (and, damped,
	// one minimum interval more, for the changes held at its end).
	Noise                churnCounts `json:"noise"`
	Churn                churnCounts `json:"churn"`
	WritesPerProfileHour float64     `json:"writesPerProfileHour"`
	// WritesPerChange is status writes over the events sent times the
	// profiles each changes: 1 when every change is written; less when the
	// budget held changes back or the manager coalesced a backlog.
	WritesPerChange float64 `json:"writesPerChange"`
	// Late is how long after it was due each event was sent.
	Late latencies `json:"late"`
	// QueueAtEnd is the mirror's queue depth when the schedule ended;
	// SettledSeconds runs from the last event until the manager was quiet,
	// TailSeconds of it the wait for the changes held at the end.
	QueueAtEnd     int     `json:"queueAtEnd"`
	SettledSeconds float64 `json:"settledSeconds"`
	TailSeconds    float64 `json:"tailSeconds,omitempty"`
	// Notes say what made the run lighter than the schedule asked for.
	Notes []string `json:"notes,omitempty"`
}

// churnCounts is what a stretch of the schedule sent and the manager did.
type churnCounts struct {
	Sent churnEvents `json:"sent"`
	// Dropped events were still unsent when their window's time ran out.
	Dropped      churnEvents `json:"dropped"`
	StatusWrites int         `json:"statusWrites"`
	Writes       writeCounts `json:"writes"`
	// HeldSignificant and HeldInsignificant count the mirror's reconciles
	// whose changed facts the budget held back.
	HeldSignificant     int     `json:"heldSignificant"`
	HeldInsignificant   int     `json:"heldInsignificant"`
	Reconciles          int     `json:"reconciles"`
	MeanQueueWaitMillis float64 `json:"meanQueueWaitMillis"`
}

type processMemory struct {
	Process    string  `json:"process"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// PeakAnonMiB is the highest anonymous RSS sampled (every 500ms): RSS
	// without the binary's pages mapped from its file.
	PeakAnonMiB float64 `json:"peakAnonMiB"`
	PeakHeapMiB float64 `json:"peakHeapMiB"`
	// Phases is the highest RSS sampled in each phase (every 500ms).
	Phases          []phasePeak `json:"phases,omitempty"`
	ShutdownSeconds float64     `json:"shutdownSeconds"`
	CleanExit       bool        `json:"cleanExit"`
	ExitError       string      `json:"exitError,omitempty"`
}

func newResults(cfg config) *results {
	r := &results{
		Machine:  machineInfo{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()},
		Clusters: cfg.clusters, Namespaces: cfg.namespaces, Profiles: cfg.clusters * cfg.namespaces,
		Gates: cfg.gates.String(), TokenCopies: cfg.clusters * cfg.namespaces * cfg.msas,
		QPS: -1, Workers: cfg.workers, MemoryLimitMiB: float64(cfg.memoryLimit) / (1 << 20),
		GCPercent: cfg.gcPercent, PeakRSSTargetMiB: cfg.peakRSSTargetMiB,
	}
	if !cfg.unthrottled() {
		r.QPS, r.Burst = cfg.qps, cfg.burst
	}
	return r
}

func writeJSON(path string, res any) error {
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
	t.section("ClusterProfile bundle benchmark")
	t.row("machine", fmt.Sprintf("%d CPUs, %s/%s, %s", r.Machine.CPUs, r.Machine.OS, r.Machine.Arch, r.Machine.Go), "")
	t.row("clusters × namespaces", fmt.Sprintf("%d × %d = %d profiles", r.Clusters, r.Namespaces, r.Profiles), "")
	qps := "unthrottled"
	if r.QPS > 0 {
		qps = fmt.Sprintf("%g (burst %d)", r.QPS, r.Burst)
	}
	t.row("client QPS / workers", fmt.Sprintf("%s / %d per controller", qps, r.Workers), "")
	t.row("capabilities", r.Gates, "")
	if r.TokenCopies > 0 {
		t.row("token copies", fmt.Sprintf("%d (%d per profile)", r.TokenCopies, r.TokenCopies/r.Profiles), "")
	}
	if r.OwnedWorld != "" {
		t.row("owned objects' world", r.OwnedWorld, "")
	}
	printConvergence(t, r)
	printRotations(t, r)
	printChanges(t, r)
	printUpstream(t, r)
	printMemory(t, r)
	printGoals(t, r.Goals)
}

// printFloor prints the floor: its writes, time and propagation.
func printFloor(t table, f *floorResult) {
	t.section("Floor (API server, same writes, 16 workers)")
	t.row("writes per profile", f.Writes, "")
	if len(f.Owned) > 0 {
		t.row("writes of owned objects", describeOwned(f.Owned), "")
	}
	t.row("time", fmt.Sprintf("%s (%d requests, %.0f/s)", formatSeconds(f.Seconds), f.Requests, f.RequestsPerSecond), "")
	t.row("profile storage writes", storageWrites(f.APIServerStorageWrites, f.APIServerProfileWrites), "")
	if p := f.Propagation; p != nil {
		t.row("condition change, p50 / p99", fmt.Sprintf("%.0fms / %.0fms (%d clusters, every namespace's profile at once)",
			p.P50Millis, p.P99Millis, p.Samples), "")
	}
}

// printLoadedFloor compares the floor beside a busy loop with the floor.
func printLoadedFloor(t table, floor, loaded *floorResult) {
	t.section(fmt.Sprintf("Floor beside a busy loop taking %.2f of a core (-floor-load)", loaded.Load))
	t.row("time", fmt.Sprintf("%s, %.2f× the floor", formatSeconds(loaded.Seconds), loaded.Seconds/floor.Seconds), "")
	t.row("CPU seconds", fmt.Sprintf("%s, the busy loop's in the bench's (the floor: %s)", loaded.CPUSeconds, floor.CPUSeconds), "")
}

// storageWrites says how many writes to etcd the API server's profile
// write requests took: 1.00 when it redid none of them.
func storageWrites(storage, requests int) string {
	if requests == 0 {
		return fmt.Sprint(storage)
	}
	return fmt.Sprintf("%.4f per write request (%d for %d)", float64(storage)/float64(requests), storage, requests)
}

// printConvergence prints the floor, the cold start, idle time and the
// restart resync.
func printConvergence(t table, r *results) {
	if f := r.Floor; f != nil {
		printFloor(t, f)
	}
	if l := r.LoadedFloor; l != nil && r.Floor != nil {
		printLoadedFloor(t, r.Floor, l)
	}
	if c := r.Cold; c != nil {
		t.section("Cold convergence (from process start)")
		t.row("first profile", formatSeconds(c.FirstProfileSeconds), "")
		t.row("all profiles exist", formatSeconds(c.AllExistSeconds), "")
		t.row("all profiles complete", formatSeconds(c.AllCompleteSeconds), "")
		if c.AllCopiesSeconds > 0 {
			t.row("all token copies made", formatSeconds(c.AllCopiesSeconds), "")
		}
		for _, o := range c.Owned {
			t.row("all "+ownedKindOf(o.Gate).short+"s complete", formatSeconds(o.CompleteSeconds), "")
		}
		t.row("ours / floor", fmt.Sprintf("%.2f× (%.2f× counting from the first profile)",
			c.RatioToFloor, c.RatioToFloorAfterStartup), verdict(c.RatioToFloor <= 1.3, "≤ 1.3×"))
		t.row("settled", fmt.Sprintf("%s (%d reconciles)", formatSeconds(c.QuietSeconds), c.Reconciles), "")
		t.row("writes", c.Writes.String(), "")
		floor := float64(r.Floor.Requests) / float64(r.Profiles)
		t.row("writes / profile", fmt.Sprintf("%.4f (profile writes the API server served: %.4f)",
			c.WritesPerProfile, float64(c.APIServerProfileWrites)/float64(r.Profiles)),
			verdict(c.WritesPerProfile <= floor, fmt.Sprintf("≤ %.4g, the floor's", floor)))
		t.row("profile storage writes", storageWrites(c.APIServerStorageWrites, c.APIServerProfileWrites), "")
		if r.TokenCopies > 0 {
			t.row("syncer writes / copy", fmt.Sprintf("%.4f", c.CopyWritesPerCopy), verdict(c.CopyWritesPerCopy <= 1, "1.0"))
		}
		for _, o := range c.Owned {
			t.row("writes / "+ownedKindOf(o.Gate).short, fmt.Sprintf("%.4f (%s: %d writes, %d objects)", o.WritesPerObject, o.Gate, o.Writes, o.Objects),
				verdict(o.exact(), "1.0"))
			printRewrites(t, o)
		}
	}
	if i := r.Idle; i != nil {
		t.section(fmt.Sprintf("Idle (%s after convergence)", formatSeconds(i.Seconds)))
		t.row("writes", i.Writes.String(), verdict(i.Writes.Total == 0, "0"))
		printOwnedWrites(t, i.Owned)
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
		t.row("keys queued", fmt.Sprintf("%d (%s)", s.KeysQueued, byName(s.KeysByController)), "")
		t.row("writes", s.Writes.String(), verdict(s.Writes.Total == 0, "0"))
		printOwnedWrites(t, s.Owned)
	}
}

// printChanges prints how changes propagate, the churn and deletion, in the
// order they ran.
func printChanges(t table, r *results) {
	if p := r.Propagation; p != nil {
		t.section(fmt.Sprintf("Propagation (%d clusters flipped, %d profiles)", p.Samples, p.ChangedProfiles))
		t.row("p50 / p99 / max", fmt.Sprintf("%.0fms / %.0fms / %.0fms", p.P50Millis, p.P99Millis, p.MaxMillis), "")
		if f := r.Floor; f != nil && f.Propagation != nil {
			t.row("the floor's p50 / p99 / max", fmt.Sprintf("%.0fms / %.0fms / %.0fms", f.Propagation.P50Millis, f.Propagation.P99Millis,
				f.Propagation.MaxMillis), "")
		}
		t.row("writes", p.Writes.String(), "")
		t.row("writes / changed profile", fmt.Sprintf("%.4f", p.WritesPerChangedProfile), verdict(p.WritesPerChangedProfile <= 1, "1"))
	}
	printChurn(t, r.Churn)
	if d := r.Deletion; d != nil {
		t.section(fmt.Sprintf("Deletion (binding in %s, %d profiles)", d.Namespace, d.Profiles))
		t.row("all gone", formatSeconds(d.Seconds), "")
		want := d.Profiles + d.Copies + d.Owned
		t.row("writes", d.Writes.String(), verdict(d.Writes.Total == want, fmt.Sprint(want)))
	}
}

// printChurn prints the churn's runs side by side, with the verdict on the
// write budget's targets.
func printChurn(t table, c *churnResult) {
	if c == nil || len(c.Runs) == 0 {
		return
	}
	scaled := func(s float64) string {
		return formatDuration(time.Duration(s * float64(c.Compression) * float64(time.Second)))
	}
	t.section(fmt.Sprintf("Churn (%s real = %s of a fleet's time: compressed %d×; %d clusters churned, %d profiles; seed %d)",
		formatSeconds(c.Seconds), scaled(c.Seconds), c.Compression, c.Clusters, c.Profiles, c.Seed))
	t.row("schedule, per cluster", "a scale event every ~30s of a fleet's time (±1 node, 2.5%; every ~5th ±25%),", "")
	t.row("", fmt.Sprintf("a flap of Available every ~10m; the first %s noise only", scaled(c.NoiseSeconds)), "")
	t.row("events scheduled", c.Scheduled.String(), "")
	for _, r := range c.Runs {
		t.row(r.Mode+" manager", strings.Join(r.ManagerFlags, " "), "")
	}
	cols := func(f func(r churnRun) string) string {
		parts := make([]string, len(c.Runs))
		for i, r := range c.Runs {
			parts[i] = fmt.Sprintf("%-44s", f(r))
		}
		return strings.TrimRight(strings.Join(parts, " "), " ")
	}
	t.row("", cols(func(r churnRun) string { return r.Mode }), "")
	printChurnRuns(t, c, cols)
}

// printChurnRuns prints the rows of the side-by-side churn table.
func printChurnRuns(t table, c *churnResult, cols func(func(churnRun) string) string) {
	t.row("events sent (noise/sig/flap)", cols(func(r churnRun) string { return r.Churn.Sent.short() }), "")
	if dropped := cols(func(r churnRun) string { return fmt.Sprint(r.Churn.Dropped.total()) }); strings.Trim(dropped, "0 ") != "" {
		t.row("events dropped (sent late)", dropped, "")
	}
	t.row("send lateness p99 / max", cols(func(r churnRun) string {
		return fmt.Sprintf("%.0fms / %.0fms", r.Late.P99Millis, r.Late.MaxMillis)
	}), "")
	t.row("first publications", cols(func(r churnRun) string { return fmt.Sprint(r.FirstPublications) }), "")
	t.row("profile status writes", cols(func(r churnRun) string { return fmt.Sprint(r.Churn.StatusWrites) }), "")
	t.row("writes / profile / hour", cols(func(r churnRun) string {
		return fmt.Sprintf("%.1f (%s)", r.WritesPerProfileHour, within(r.WritesPerProfileHour <= c.BudgetPerHour))
	}), fmt.Sprintf("KEP-4322: ≤ %.0f", c.BudgetPerHour))
	t.row("noise-only window writes", cols(func(r churnRun) string { return fmt.Sprint(r.Noise.StatusWrites) }), "")
	t.row("held significant / not", cols(func(r churnRun) string {
		return fmt.Sprintf("%d / %d", r.Churn.HeldSignificant, r.Churn.HeldInsignificant)
	}), "")
	t.row("writes / change", cols(func(r churnRun) string { return fmt.Sprintf("%.3f", r.WritesPerChange) }), "")
	t.row("mirror queue: end / wait", cols(func(r churnRun) string {
		return fmt.Sprintf("%d at the end, mean wait %.0fms", r.QueueAtEnd, r.Churn.MeanQueueWaitMillis)
	}), "")
	t.row("quiet after the last event", cols(func(r churnRun) string {
		if r.TailSeconds > 0 {
			return fmt.Sprintf("%s (%s of it waiting out held changes)", formatSeconds(r.SettledSeconds), formatSeconds(r.TailSeconds))
		}
		return formatSeconds(r.SettledSeconds)
	}), "")
	for _, r := range c.Runs {
		for _, note := range r.Notes {
			t.row("note, "+r.Mode, note, "")
		}
	}
	for _, r := range c.Runs {
		if !r.Damped {
			continue
		}
		line := verdict(r.WritesPerProfileHour <= c.BudgetPerHour, fmt.Sprintf("damped ≤ %.0f writes per profile per hour", c.BudgetPerHour)) +
			"; " + verdict(r.Noise.StatusWrites == 0, "no write below the significance rule")
		if len(r.Notes) > 0 {
			line += " (the run fell behind: see the notes)"
		}
		t.row("verdict", line, "")
	}
}

// within says whether a rate is within the budget.
func within(ok bool) string {
	if ok {
		return "within the budget"
	}
	return "over the budget"
}

// printRotations prints token and certificate rotations.
func printRotations(t table, r *results) {
	if k := r.TokenRotation; k != nil {
		t.section(fmt.Sprintf("Token rotation (%d tokens, %d namespaces)", k.Tokens, k.Namespaces))
		if s := k.Single; s != nil {
			t.row("one at a time, all copies", fmt.Sprintf("p50 %.0fms / p99 %.0fms / max %.0fms (%d tokens)",
				s.P50Millis, s.P99Millis, s.MaxMillis, s.Samples), verdict(s.P99Millis <= 1000, "p99 ≤ 1s"))
		}
		if a := k.All; a != nil {
			t.row("all at once", fmt.Sprintf("written in %s, every copy updated after %s",
				formatSeconds(a.WriteSeconds), formatSeconds(a.AllUpdatedSeconds)), "")
			t.row("  per copy", fmt.Sprintf("p50 %.0fms / p99 %.0fms / max %.0fms (%d copies)",
				a.PerCopy.P50Millis, a.PerCopy.P99Millis, a.PerCopy.MaxMillis, a.PerCopy.Samples), "")
		}
		t.row("writes", k.Writes.String(), "")
		t.row("syncer writes / copy", fmt.Sprintf("%.4f", k.CopyWritesPerCopy), verdict(k.CopyWritesPerCopy <= 1, "1.0"))
	}
	if c := r.CARotation; c != nil {
		t.section(fmt.Sprintf("cluster-proxy certificate rotation (%d profiles)", c.Profiles))
		t.row("all profiles updated", formatSeconds(c.Seconds), "")
		t.row("writes", c.Writes.String(), "")
		t.row("proxy writes / profile", fmt.Sprintf("%.4f", c.ProxyWritesPerProfile), verdict(c.ProxyWritesPerProfile == 1, "1.0"))
		if c.CopyWritesPerCopy > 0 {
			t.row("syncer writes / copy", fmt.Sprintf("%.4f", c.CopyWritesPerCopy), verdict(c.CopyWritesPerCopy == 1, "1.0"))
		}
		if a := c.ArgoCD; a != nil {
			t.row("writes / Argo CD Secret", fmt.Sprintf("%.4f (%d writes, all updated after %s)", a.WritesPerObject, a.Writes,
				formatSeconds(a.CompleteSeconds)), verdict(a.exact(), "1.0"))
		}
	}
}

// exact tells whether the capability wrote each object exactly once.
func (o ownedResult) exact() bool { return o.Objects > 0 && o.Writes == o.Objects }

// printRewrites prints what the first rewrites of o's objects changed.
func printRewrites(t table, o ownedResult) {
	if len(o.Rewrites) == 0 {
		return
	}
	described := make([]string, len(o.Rewrites))
	for i, r := range o.Rewrites {
		described[i] = r.String()
	}
	t.row("  first rewrites", strings.Join(described, "; "), "")
}

// printOwnedWrites prints, on one row, the writes of the objects the
// capabilities own, which must be none.
func printOwnedWrites(t table, owned []ownedResult) {
	if len(owned) == 0 {
		return
	}
	parts, total := make([]string, len(owned)), 0
	for i, o := range owned {
		parts[i] = fmt.Sprintf("%s %d", o.Gate, o.Writes)
		total += o.Writes
	}
	t.row("writes of owned objects", strings.Join(parts, ", "), verdict(total == 0, "0"))
}

// describeOwned lists the floor's writes of owned objects, in report
// order.
func describeOwned(writes ownedWrites) string {
	var parts []string
	for _, k := range ownedKinds {
		if n, ok := writes[k.gate]; ok {
			parts = append(parts, fmt.Sprintf("%d %s %s", n, k.kind, k.floorWrite))
		}
	}
	return strings.Join(parts, ", ")
}

// byName lists the counts that are not 0 by name, in name order.
func byName(counts map[string]int) string {
	parts := make([]string, 0, len(counts))
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		if counts[name] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, counts[name]))
		}
	}
	return strings.Join(parts, ", ")
}

// printUpstream prints OCM's own mirror on the same world.
func printUpstream(t table, r *results) {
	u := r.Upstream
	if u == nil {
		return
	}
	t.section("Upstream OCM v1.2.0 mirror, same world")
	t.row("all profiles complete", formatSeconds(u.AllCompleteSeconds), "")
	if u.OursOverUpstream > 0 {
		t.row("ours / upstream", fmt.Sprintf("%.2f×", u.OursOverUpstream), verdict(u.OursOverUpstream < 1, "< 1×"))
	}
	t.row("settled", formatSeconds(u.QuietSeconds), "")
	t.row("writes / profile", fmt.Sprintf("%.4f (%d profile writes the API server served)", u.WritesPerProfile, u.APIServerProfileWrites), "")
	if p := u.Propagation; p != nil {
		t.row("propagation p50 / p99", fmt.Sprintf("%.0fms / %.0fms", p.P50Millis, p.P99Millis), "")
	}
	t.row("unbind, all gone", formatSeconds(u.UnbindSeconds), "")
	t.row("peak RSS", fmt.Sprintf("%.0f MiB", u.PeakRSSMiB), "")
	if ours := r.oursPeakRSS(); ours > 0 {
		t.row("ours / upstream, peak RSS", fmt.Sprintf("%.2f×", ours/u.PeakRSSMiB), verdict(ours <= u.PeakRSSMiB, "≤ 1×"))
	}
}

// oursPeakRSS is the highest peak RSS of this project's manager processes.
func (r *results) oursPeakRSS() float64 {
	peak := 0.0
	for _, m := range r.Memory {
		if m.Process != upstreamProcess {
			peak = max(peak, m.PeakRSSMiB)
		}
	}
	return peak
}

// printMemory prints each process's peaks and the heap per profile.
func printMemory(t table, r *results) {
	if len(r.Memory) > 0 {
		t.section("Memory (per process)")
		if r.MemoryLimitMiB > 0 {
			t.row("container limit", fmt.Sprintf("%.0f MiB (the manager's soft limit: %.0f%% of it)", r.MemoryLimitMiB, memlimit.Share*100), "")
		}
		if r.GCPercent > 0 {
			t.row("GOGC", fmt.Sprint(r.GCPercent), "")
		}
		if peak := r.oursPeakRSS(); r.PeakRSSTargetMiB > 0 && peak > 0 {
			t.row("peak RSS, every manager", fmt.Sprintf("%.0f MiB", peak),
				verdict(peak < r.PeakRSSTargetMiB, fmt.Sprintf("< %.0f MiB", r.PeakRSSTargetMiB)))
		}
		for _, m := range r.Memory {
			line := fmt.Sprintf("peak RSS %.0f MiB (anonymous %.0f MiB)", m.PeakRSSMiB, m.PeakAnonMiB)
			if m.PeakHeapMiB > 0 {
				line += fmt.Sprintf(", peak heap in use %.0f MiB (%.1f KiB per profile)",
					m.PeakHeapMiB, m.PeakHeapMiB*1024/float64(r.Profiles))
			}
			t.row(m.Process, line, "")
			if len(m.Phases) > 1 {
				t.row("", "by phase: "+phasePeaks(m.Phases), "")
			}
		}
	}
	if r.ManagerLogs != "" {
		t.row("logs", r.ManagerLogs, "")
	}
}

// phasePeaks lists the highest RSS sampled in each phase.
func phasePeaks(phases []phasePeak) string {
	parts := make([]string, len(phases))
	for i, p := range phases {
		parts[i] = fmt.Sprintf("%s %.0f", p.Phase, p.PeakRSSMiB)
	}
	return strings.Join(parts, ", ") + " MiB"
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
