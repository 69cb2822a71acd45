// Command bench measures clusterprofile-manager at scale against a real
// kube-apiserver and etcd (started with envtest), running the built binary as
// a subprocess exactly as it runs in production.
//
// It builds a hub of N ManagedClusters bound into M namespaces (N×M desired
// ClusterProfiles), measures how fast the API server itself takes the same
// writes (the floor), and then the manager's cold convergence, writes per
// profile (and, for the capabilities that own objects of their own, per
// MultiKueueCluster, Argo CD cluster Secret and PlacementDecision slice, as
// the API server's audit log counts them), idle writes, restart resync,
// change propagation, deletion and memory; then the profile writes under
// churn, with the facts' write budget and without. See `make bench`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
)

// config holds the command-line settings.
type config struct {
	managerPath        string
	clusters           int
	namespaces         int
	qps                float64
	burst              int
	workers            int
	propagationSamples int
	idle               time.Duration
	jsonPath           string
	timeout            time.Duration
	// gates are the manager's capabilities this run turns on.
	gates gates
	// sweep, when set, are the profile counts to run the whole benchmark
	// at, one after the other, for the cost curve; sweepSVG is its plot.
	sweep    []int
	sweepSVG string
	// msas is K, the labelled ManagedServiceAccounts of every cluster when
	// the syncer runs: K token copies per profile.
	msas            int
	rotationSamples int
	// upstreamPath is OCM's own mirror (hack/_upstreammirror), measured on
	// the same world after ours; empty skips it.
	upstreamPath string
	// managerFlags are passed on to the manager, e.g. --zap-log-level=2 to
	// log every write when looking for a redundant one.
	managerFlags stringList
	// memoryLimit is the container memory limit the manager runs under, in
	// bytes (0: none), as the chart passes it.
	memoryLimit int64
	// gcPercent, when positive, is the manager's GOGC, as the chart's
	// gcPercent value sets it.
	gcPercent int
	// floorLoad, when positive, runs the floor again beside a busy loop
	// taking this share of a core.
	floorLoad float64
	// peakRSSTargetMiB, when positive, is a target for the peak RSS of every
	// manager process of the run, reported with a verdict.
	peakRSSTargetMiB float64
	// goals checks Scale III's goals (goals.go): the run fails on a miss.
	goals bool
	// churn is how long the churn phase drives scale events and condition
	// flaps (real time, compressed churnCompression×); 0 skips it.
	churn time.Duration
	// churnSeed draws the churn's schedule.
	churnSeed uint64
	// churnClusters is how many of the clusters churn (the first ones);
	// validate makes 0 all of them.
	churnClusters int
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// unthrottled tells whether clients run without a client-side rate limit.
func (c config) unthrottled() bool { return c.qps <= 0 }

// clientQPS is the rest.Config QPS for the manager and the floor. client-go
// installs no rate limiter for a negative QPS (0 would mean its default, 5).
func (c config) clientQPS() float32 {
	if c.unthrottled() {
		return -1
	}
	return float32(c.qps)
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&c.managerPath, "manager", "", "Path to the built clusterprofile-manager binary (required).")
	fs.IntVar(&c.clusters, "clusters", 1000, "ManagedClusters (N).")
	fs.IntVar(&c.namespaces, "namespaces", 10, "Namespaces bound to the set that holds every cluster (M); N×M profiles.")
	fs.Float64Var(&c.qps, "qps", -1, "Client QPS of the manager and of the floor; -1 (or 0) for no client-side limit.")
	fs.IntVar(&c.burst, "burst", 100, "Client burst of the manager and of the floor, when -qps is positive.")
	fs.IntVar(&c.workers, "workers", 16, "The manager's --mirror-workers.")
	fs.IntVar(&c.propagationSamples, "propagation-samples", 200, "Clusters whose Available condition is flipped to measure propagation (with fewer than 100, p99 is the slowest).")
	fs.DurationVar(&c.idle, "idle", 10*time.Second, "How long to watch the converged manager for writes it should not send.")
	fs.StringVar(&c.jsonPath, "json", "", "Also write the results as JSON to this file.")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "Give up after this long.")
	gateList := fs.String("gates", "mirror", "Capabilities to run: all, or a comma-separated list of "+strings.Join(gateNames(), ", ")+" (the mirror always runs; argocd brings direct along unless proxy runs, for the entry its cluster Secrets use).")
	fs.IntVar(&c.msas, "msas", 1, "Labelled ManagedServiceAccounts per cluster (K token copies per profile) when the credsync gate is on.")
	fs.IntVar(&c.rotationSamples, "rotation-samples", 50, "Tokens rotated one at a time to time a single rotation (credsync).")
	fs.StringVar(&c.upstreamPath, "upstream", "", "Path to OCM's own mirror (bin/ocm/upstream-clusterprofile-mirror, built by `make ocm-binaries`) to measure on the same world; empty skips it.")
	fs.Var(&c.managerFlags, "manager-flag", "An extra flag for the manager, e.g. -manager-flag=--zap-log-level=2 (repeatable).")
	fs.Float64Var(&c.peakRSSTargetMiB, "peak-rss-target", 0, "A target for the peak RSS of every manager process, in MiB (the issue's: 300 for the whole bundle, 200 for the mirror at 35,000 profiles); 0 reports none.")
	fs.BoolVar(&c.goals, "goals", false, "Check Scale III's goals (docs/performance.md: the chart's defaults at 35,000 profiles) and exit 1 naming every row a figure misses.")
	fs.Float64Var(&c.floorLoad, "floor-load", 0, "Also time the floor beside a busy loop in the benchmark taking this share of a core (e.g. 0.3, about the manager's in a cold start), sending no request: what a process's CPU alone costs the API server on the same cores. 0 skips it.")
	fs.IntVar(&c.gcPercent, "gogc", 0, "The manager's GOGC, as the chart's gcPercent sets it (e.g. 50, the chart's default); 0 leaves Go's default (100).")
	fs.DurationVar(&c.churn, "churn", 2*time.Minute, "How long to churn every cluster's node count claim and Available condition, once with the facts' write budget and once without (time runs 10× faster than a fleet's); 0 skips the phase.")
	fs.IntVar(&c.churnClusters, "churn-clusters", 100, "How many clusters churn (the first ones), so that the world's size and the churn's load are set apart; 0 churns every cluster. The default is what 2 cores keep on schedule.")
	fs.Uint64Var(&c.churnSeed, "churn-seed", 1, "Seed of the churn's schedule; both managers see the same one.")
	sweep := fs.String("sweep", "", "Run the whole benchmark at each of these profile counts (comma-separated, increasing; clusters = profiles / -namespaces) and report the cost curve: a table, a peak RSS fit and a plot (-sweep-svg).")
	fs.StringVar(&c.sweepSVG, "sweep-svg", "bin/bench-sweep.svg", "Where -sweep writes its plot.")
	memoryLimit := fs.String("memory-limit", "", "Run the manager as under a container memory limit (e.g. 512Mi, the chart's default): it keeps its heap under 90% of it. Empty: no limit.")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.sweep, err = parseSweep(*sweep, c.namespaces); err != nil {
		return c, fmt.Errorf("-sweep: %w", err)
	}
	if *memoryLimit != "" {
		q, err := resource.ParseQuantity(*memoryLimit)
		if err != nil {
			return c, fmt.Errorf("-memory-limit: %w", err)
		}
		c.memoryLimit = q.Value()
	}
	gates, err := parseGates(*gateList)
	if err != nil {
		return c, fmt.Errorf("-gates: %w", err)
	}
	c.gates = gates
	return c, c.validate()
}

// validate checks the parsed flags and derives the sample counts they cap.
func (c *config) validate() error {
	switch {
	case c.managerPath == "":
		return errors.New("-manager is required (e.g. bin/clusterprofile-manager, built by `make build`)")
	case c.clusters < 1 || c.namespaces < 1:
		return errors.New("-clusters and -namespaces must be at least 1")
	case c.workers < 1:
		return errors.New("-workers must be at least 1")
	case !c.unthrottled() && c.burst < 1:
		return errors.New("-burst must be at least 1 when -qps is positive")
	case c.propagationSamples < 0 || c.rotationSamples < 0 || c.peakRSSTargetMiB < 0:
		return errors.New("-propagation-samples, -rotation-samples and -peak-rss-target must not be negative")
	case c.churn != 0 && c.churn < minChurn:
		return fmt.Errorf("-churn must be 0 (skip) or at least %s", minChurn)
	case c.floorLoad < 0 || c.floorLoad > 1:
		return errors.New("-floor-load must be between 0 and 1 (a share of one core)")
	case c.churnClusters < 0:
		return errors.New("-churn-clusters must not be negative")
	case c.upstreamPath != "" && c.gates.String() != "mirror":
		return errors.New("-upstream compares mirrors: run it with -gates=mirror")
	case c.gates["credsync"] && c.msas < 1:
		return errors.New("-msas must be at least 1 when the credsync gate is on")
	}
	if !c.gates["credsync"] {
		c.msas = 0
	}
	for flagName, path := range map[string]string{"-manager": c.managerPath, "-upstream": c.upstreamPath} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s: %w", flagName, err)
		}
	}
	return nil
}

// fitted is c with the sample and churn counts cut to its world: run
// applies it, so that each size of a sweep cuts the counts the flags gave.
func (c config) fitted() config {
	c.propagationSamples = min(c.propagationSamples, c.clusters)
	c.rotationSamples = min(c.rotationSamples, c.clusters*c.msas)
	if c.churnClusters == 0 || c.churnClusters > c.clusters {
		c.churnClusters = c.clusters
	}
	return c
}

func main() {
	os.Exit(benchMain())
}

// benchMain is main without os.Exit, so that deferred teardown always runs.
func benchMain() int {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	// client-go reports throttling and watch restarts through klog; at this
	// scale that is noise on top of the progress lines.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)

	// Ctrl-C and SIGTERM cancel the run; the deferred teardown then stops the
	// manager and the control plane, so nothing is left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	if len(cfg.sweep) > 0 {
		return sweepMain(ctx, cfg)
	}
	res, err := run(ctx, cfg)
	if cfg.goals && res != nil {
		res.Goals = scaleGoals(res)
		if missed := missedGoals(res.Goals); missed != "" {
			err = errors.Join(err, errors.New(missed))
		}
	}
	printReport(os.Stdout, res)
	if cfg.jsonPath != "" {
		if jsonErr := writeJSON(cfg.jsonPath, res); jsonErr != nil {
			err = errors.Join(err, jsonErr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// sweepMain runs the sweep, prints its table and writes its plot (and its
// points as JSON with -json).
func sweepMain(ctx context.Context, cfg config) int {
	points, err := runSweep(ctx, cfg, cfg.sweep, os.Stderr)
	printSweep(os.Stdout, points)
	if len(points) > 0 {
		err = errors.Join(err, writeSweepSVG(cfg.sweepSVG, points))
		fmt.Printf("  plot: %s\n", cfg.sweepSVG)
	}
	if cfg.jsonPath != "" {
		err = errors.Join(err, writeJSON(cfg.jsonPath, points))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// phase is one measurement of a run.
type phase struct {
	name string
	run  func(context.Context) error
}

// phases are the measurements the run's capabilities call for, in order.
func (b *bench) phases() []phase {
	phases := []phase{
		{"floor", b.measureFloor},
		{"cold convergence", b.coldConvergence},
		{"idle", b.idle},
		{"restart resync", b.restartResync},
	}
	if b.world.copyCount() > 0 {
		phases = append(phases, phase{"token rotation", b.tokenRotation})
	}
	if b.cfg.gates["proxy"] {
		phases = append(phases, phase{"CA rotation", b.caRotation})
	}
	phases = append(phases, phase{"propagation", b.propagation})
	if b.cfg.churn > 0 {
		phases = append(phases, phase{"churn", b.churn})
	}
	phases = append(phases, phase{"deletion", b.deletion})
	if b.cfg.upstreamPath != "" {
		phases = append(phases, phase{"upstream's mirror", b.upstream})
	}
	return phases
}

// run sets the hub up, runs every phase in order and always tears down. The
// results of the phases that finished are returned even on error.
func run(ctx context.Context, cfg config) (res *results, err error) {
	b := newBench(cfg.fitted())
	defer func() { err = errors.Join(err, b.tearDown()) }()
	if err := b.setUp(ctx); err != nil {
		return b.res, fmt.Errorf("setting up: %w", err)
	}
	phases := b.phases()
	for _, phase := range phases {
		b.progress.logf("== %s", phase.name)
		b.enterPhase(phase.name)
		if err := phase.run(ctx); err != nil {
			// Say why the run was cut short (signal or -timeout) when the
			// phase only saw "context canceled".
			if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
				err = fmt.Errorf("%w (%w)", err, cause)
			}
			return b.res, fmt.Errorf("%s: %w", phase.name, err)
		}
	}
	return b.res, nil
}
