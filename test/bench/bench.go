package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// bench is one benchmark run: the control plane, the hub's objects, the
// observer and the manager process of the current phase.
type bench struct {
	cfg      config
	progress *progress
	res      *results

	env        *framework.Env
	dir        string // kubeconfig and manager logs; kept for inspection
	kubeconfig string
	// setup builds and changes the world. It is unthrottled and its requests
	// are not part of any measurement.
	setup client.Client
	world *world
	// apiServer counts profile writes as the API server saw them; audit
	// the writes to the owned objects (nil when no capability owns any).
	apiServer *apiServer
	audit     *auditLog

	obs    *observer
	copies *copyObserver // nil without the syncer
	// owned are the observers of the owned objects, in ownedKinds' order.
	owned        []*ownedObserver
	stopObserver context.CancelFunc
	manager      *managerProcess
	managers     int    // started so far, to name their logs
	phase        string // the phase running now
}

// enterPhase tells the running manager, if any, that name begins, so
// that its memory is reported by phase; managers started later begin in it.
func (b *bench) enterPhase(name string) {
	b.phase = name
	if b.manager != nil {
		b.manager.enterPhase(name)
	}
}

func newBench(cfg config) *bench {
	return &bench{cfg: cfg, progress: newProgress(os.Stderr), res: newResults(cfg)}
}

// setUp starts the control plane and creates the world the manager will find.
func (b *bench) setUp(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "clusterprofile-bench-")
	if err != nil {
		return err
	}
	b.dir = dir
	b.res.ManagerLogs = dir
	b.world = newWorld(b.cfg)
	if b.audit, err = newAuditLog(dir, b.world); err != nil {
		return err
	}
	b.progress.logf("starting kube-apiserver and etcd (work dir %s)", dir)
	if b.env, err = framework.Start(framework.Options{KueueCRDs: b.cfg.gates["multikueue"], APIServerFlags: b.audit.apiServerFlags()}); err != nil {
		return err
	}
	kubeconfig, err := b.env.AdminKubeconfig()
	if err != nil {
		return err
	}
	b.kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(b.kubeconfig, kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if b.setup, err = newClient(b.env.Config, -1, 0); err != nil {
		return err
	}
	if b.apiServer, err = newAPIServer(b.env.Config); err != nil {
		return err
	}
	b.progress.logf("creating %d ManagedClusters, %d namespaces and bindings (%d desired profiles, %d token copies; gates %s)",
		b.cfg.clusters, b.cfg.namespaces, b.world.profileCount(), b.world.copyCount(), b.cfg.gates)
	start := time.Now()
	if err := b.world.create(ctx, b.setup); err != nil {
		return fmt.Errorf("creating the world: %w", err)
	}
	b.progress.logf("world created in %s", formatDuration(time.Since(start)))
	if owned := b.world.describeOwned(); owned != "" {
		b.res.OwnedWorld = owned
		b.progress.logf("for the capabilities that own objects: %s", owned)
	}
	// The observer watches from before the floor, so that the floor and the
	// manager's run carry the same measuring load on the API server.
	obsCtx, cancel := context.WithCancel(ctx)
	b.stopObserver = cancel
	return b.startObservers(obsCtx)
}

// startObservers watches the profiles and the token copies through one
// cache of their own and waits for its first list.
func (b *bench) startObservers(ctx context.Context) error {
	cfg := rest.CopyConfig(b.env.Config)
	cfg.QPS = -1
	c, err := cache.New(cfg, cache.Options{
		Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: syncedCopies()}},
	})
	if err != nil {
		return fmt.Errorf("creating the observers' cache: %w", err)
	}
	if b.obs, err = newObserver(ctx, c, b.world); err != nil {
		return err
	}
	if b.world.copyCount() > 0 {
		if b.copies, err = newCopyObserver(ctx, c, b.world); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("observers' cache did not sync: %w", ctx.Err())
	}
	return b.startOwnedObservers(ctx)
}

// syncedCopies selects the token copies by the label the syncer sets.
func syncedCopies() labels.Selector {
	req, err := labels.NewRequirement(credsync.LabelSyncedFrom, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	return labels.NewSelector().Add(*req)
}

// tearDown stops whatever is running: the manager (which must exit cleanly on
// SIGTERM), the observer, then the control plane.
func (b *bench) tearDown() error {
	var errs []error
	if b.manager != nil {
		errs = append(errs, b.stopManager())
	}
	if b.stopObserver != nil {
		b.stopObserver()
	}
	if b.env != nil {
		b.progress.logf("stopping kube-apiserver and etcd")
		if err := b.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the control plane: %w", err))
		}
	}
	if b.dir != "" {
		b.progress.logf("manager logs kept in %s", b.dir)
	}
	return errors.Join(errs...)
}

// startManager runs a fresh manager process with the run's settings: the
// flags its capabilities need, the run's own -manager-flag ones, then
// extraFlags.
func (b *bench) startManager(name string, extraFlags ...string) (*managerProcess, error) {
	b.managers++
	m, err := startManager(managerOptions{
		name:         name,
		path:         b.cfg.managerPath,
		kubeconfig:   b.kubeconfig,
		featureGates: b.cfg.gates.featureGates(),
		logPath:      filepath.Join(b.dir, fmt.Sprintf("manager-%d-%s.log", b.managers, name)),
		qps:          b.cfg.clientQPS(),
		burst:        b.cfg.burst,
		workers:      b.cfg.workers,
		extraFlags:   slices.Concat(b.world.managerFlags(), b.cfg.managerFlags, extraFlags),
		memoryLimit:  b.cfg.memoryLimit,
		gcPercent:    b.cfg.gcPercent,
	})
	if err != nil {
		return nil, err
	}
	b.manager = m
	m.enterPhase(b.phase)
	b.progress.logf("started manager %q (pid %d, metrics %s, log %s)", name, m.pid(), m.metricsURL, m.logPath)
	return m, nil
}

// stopManager sends SIGTERM to the current manager, records how it exited
// and its memory peaks, and fails when it did not exit cleanly.
func (b *bench) stopManager() error {
	m := b.manager
	b.manager = nil
	took, err := m.stop(shutdownTimeout)
	mem := m.memory()
	mem.ShutdownSeconds = took.Seconds()
	mem.CleanExit = err == nil
	if err != nil {
		mem.ExitError = err.Error()
	}
	b.res.Memory = append(b.res.Memory, mem)
	b.progress.logf("manager %q stopped in %s (peak RSS %.0f MiB, peak heap %.0f MiB)",
		m.name, formatDuration(took), mem.PeakRSSMiB, mem.PeakHeapMiB)
	if err != nil {
		return fmt.Errorf("manager %q: %w", m.name, err)
	}
	return nil
}

// newClient talks to the API server directly, with the given rate limits.
func newClient(base *rest.Config, qps float32, burst int) (client.Client, error) {
	cfg := rest.CopyConfig(base)
	cfg.QPS, cfg.Burst = qps, burst
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return c, nil
}

// progress prints timestamped lines so a person sees the run is alive.
type progress struct {
	start time.Time
	out   io.Writer
}

func newProgress(out io.Writer) *progress { return &progress{start: time.Now(), out: out} }

func (p *progress) logf(format string, args ...any) {
	fmt.Fprintf(p.out, "[%7.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// forEach calls do for every i in [0, n) on up to workers goroutines. The
// first error stops the others and is returned.
func forEach(ctx context.Context, workers, n int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
