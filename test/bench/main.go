// Command bench measures clusterprofile-manager at scale against a real
// kube-apiserver and etcd (started with envtest), running the built binary as
// a subprocess exactly as it runs in production.
//
// It builds a hub of N ManagedClusters bound into M namespaces (N×M desired
// ClusterProfiles), measures how fast the API server itself takes the same
// writes (the floor), and then the manager's cold convergence, writes per
// profile, idle writes, restart resync, change propagation, deletion and
// memory. See `make bench`.
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
	// managerFlags are passed on to the manager, e.g. --zap-log-level=2 to
	// log every write when looking for a redundant one.
	managerFlags stringList
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
	fs.IntVar(&c.propagationSamples, "propagation-samples", 50, "Clusters whose Available condition is flipped to measure propagation.")
	fs.DurationVar(&c.idle, "idle", 10*time.Second, "How long to watch the converged manager for writes it should not send.")
	fs.StringVar(&c.jsonPath, "json", "", "Also write the results as JSON to this file.")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "Give up after this long.")
	fs.Var(&c.managerFlags, "manager-flag", "An extra flag for the manager, e.g. -manager-flag=--zap-log-level=2 (repeatable).")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.managerPath == "":
		return c, errors.New("-manager is required (e.g. bin/clusterprofile-manager, built by `make build`)")
	case c.clusters < 1 || c.namespaces < 1:
		return c, errors.New("-clusters and -namespaces must be at least 1")
	case c.workers < 1:
		return c, errors.New("-workers must be at least 1")
	case !c.unthrottled() && c.burst < 1:
		return c, errors.New("-burst must be at least 1 when -qps is positive")
	case c.propagationSamples < 0:
		return c, errors.New("-propagation-samples must not be negative")
	}
	if _, err := os.Stat(c.managerPath); err != nil {
		return c, fmt.Errorf("-manager: %w", err)
	}
	c.propagationSamples = min(c.propagationSamples, c.clusters)
	return c, nil
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

	res, err := run(ctx, cfg)
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

// run sets the hub up, runs every phase in order and always tears down. The
// results of the phases that finished are returned even on error.
func run(ctx context.Context, cfg config) (res *results, err error) {
	b := newBench(cfg)
	defer func() { err = errors.Join(err, b.tearDown()) }()
	if err := b.setUp(ctx); err != nil {
		return b.res, fmt.Errorf("setting up: %w", err)
	}
	phases := []struct {
		name string
		run  func(context.Context) error
	}{
		{"floor", b.measureFloor},
		{"cold convergence", b.coldConvergence},
		{"idle", b.idle},
		{"restart resync", b.restartResync},
		{"propagation", b.propagation},
		{"deletion", b.deletion},
	}
	for _, phase := range phases {
		b.progress.logf("== %s", phase.name)
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
