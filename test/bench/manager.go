package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/memlimit"
)

const (
	// shutdownTimeout is how long a manager gets to exit after SIGTERM; the
	// manager's own --graceful-shutdown-timeout is 30s.
	shutdownTimeout = 45 * time.Second
	// memoryEvery is how often a manager's RSS is sampled (from /proc).
	memoryEvery = 500 * time.Millisecond
	// heapEvery is how often its heap is read from /metrics when nothing
	// else scrapes it. Every scrape lists every cached profile and copy for
	// the manager's own gauges: at a Prometheus-like cadence, so that the
	// measuring does not weigh on what it measures (a scrape every 500 ms
	// was several times what a Prometheus server asks of a manager).
	heapEvery = 5 * time.Second
	// quietPoll is how often the mirror's metrics are read while waiting for
	// it to settle.
	quietPoll = 200 * time.Millisecond
)

type managerOptions struct {
	name, path, kubeconfig, logPath string
	featureGates                    string
	qps                             float32
	burst, workers                  int
	extraFlags                      []string
	// memoryLimit, when set, is passed as the container's memory limit,
	// as the chart does (the manager keeps its heap under 90% of it).
	memoryLimit int64
	// gcPercent, when positive, is passed as GOGC.
	gcPercent int
}

// managerProcess is a running clusterprofile-manager binary.
type managerProcess struct {
	name       string
	cmd        *exec.Cmd
	logPath    string
	metricsURL string
	started    time.Time

	exited  chan struct{} // closed when the process has exited
	exitErr error         // set before exited is closed

	mu         sync.Mutex
	peakRSS    uint64
	peakAnon   uint64 // the highest RssAnon sampled
	peakHeap   float64
	last       metricSet // the latest scrape, for progress lines
	lastScrape time.Time
	// phases holds the highest RSS sampled in each phase of the run the
	// process lived through, in order; the last is the current one.
	phases []phasePeak
}

// phasePeak is the highest RSS sampled while a phase ran: where in a run
// the process's peak (VmHWM, which has no time) came from.
type phasePeak struct {
	Phase      string  `json:"phase"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
}

// startManager starts the binary with the flags production uses, its output
// going to logPath.
func startManager(o managerOptions) (*managerProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{
		"--kubeconfig=" + o.kubeconfig,
		"--feature-gates=" + o.featureGates,
		"--metrics-bind-address=" + addr,
		"--metrics-secure=false", // the benchmark scrapes over plain HTTP
		"--health-probe-bind-address=0",
		"--kube-api-qps=" + strconv.FormatFloat(float64(o.qps), 'g', -1, 32),
		"--kube-api-burst=" + strconv.Itoa(o.burst),
		"--mirror-workers=" + strconv.Itoa(o.workers),
	}
	m, err := startProcess(o.name, o.path, append(args, o.extraFlags...), o.logPath, "http://"+addr+"/metrics", o.env()...)
	return m, err
}

func (o managerOptions) env() []string {
	var env []string
	if o.memoryLimit > 0 {
		env = append(env, memlimit.EnvContainerLimit+"="+strconv.FormatInt(o.memoryLimit, 10))
	}
	if o.gcPercent > 0 {
		env = append(env, "GOGC="+strconv.Itoa(o.gcPercent))
	}
	return env
}

// startProcess starts a program whose memory is sampled until it exits;
// metricsURL is empty for a program without metrics.
// env is added to the benchmark's own environment.
func startProcess(name, path string, args []string, logPath, metricsURL string, env ...string) (*managerProcess, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log of %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = managerSysProcAttr()
	m := &managerProcess{
		name: name, cmd: cmd, logPath: logPath, metricsURL: metricsURL,
		exited: make(chan struct{}),
	}
	m.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() {
		m.exitErr = cmd.Wait()
		_ = log.Close()
		close(m.exited)
	}()
	go m.sampleMemory()
	return m, nil
}

// freePort asks the kernel for a port that is free right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (m *managerProcess) pid() int { return m.cmd.Process.Pid }

// errExited reports a manager that died on its own.
func (m *managerProcess) errExited() error {
	return fmt.Errorf("manager %q exited unexpectedly (%v); see %s", m.name, m.exitErr, m.logPath)
}

// stop sends SIGTERM and waits; a manager that does not exit in time is
// killed. The error tells whether it failed to exit cleanly.
func (m *managerProcess) stop(timeout time.Duration) (time.Duration, error) {
	select {
	case <-m.exited:
		return 0, m.errExited()
	default:
	}
	m.sampleRSS() // the last chance to read its peak
	start := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("signalling manager: %w", err)
	}
	select {
	case <-m.exited:
		if m.exitErr != nil {
			return time.Since(start), fmt.Errorf("exited with %w after SIGTERM; see %s", m.exitErr, m.logPath)
		}
		return time.Since(start), nil
	case <-time.After(timeout):
		_ = m.cmd.Process.Kill()
		<-m.exited
		return time.Since(start), fmt.Errorf("did not exit within %s of SIGTERM and was killed; see %s", timeout, m.logPath)
	}
}

// scrape reads the manager's metrics, failing fast when it has exited.
func (m *managerProcess) scrape(ctx context.Context) (metricSet, error) {
	select {
	case <-m.exited:
		return nil, m.errExited()
	default:
	}
	set, err := scrape(ctx, m.metricsURL)
	if err == nil {
		m.mu.Lock()
		m.last, m.lastScrape = set, time.Now()
		m.peakHeap = max(m.peakHeap, set.heapInuseBytes())
		m.mu.Unlock()
	}
	return set, err
}

// sinceScrape is how long ago the manager's metrics were last read.
func (m *managerProcess) sinceScrape() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Since(m.lastScrape)
}

// sleep waits, failing when the context ends or the manager exits; a nil
// manager only waits.
func (m *managerProcess) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	var exited <-chan struct{}
	if m != nil {
		exited = m.exited
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-exited:
		return m.errExited()
	case <-t.C:
		return nil
	}
}

// waitQuiet waits until the mirror has finished at least minReconciles
// reconciles and every controller has then been quiet for stableFor: nothing
// queued, no worker busy, and no reconcile or write request finished. It returns when the quiet
// began and the metrics read then.
func (m *managerProcess) waitQuiet(ctx context.Context, minReconciles int, stableFor time.Duration) (time.Time, metricSet, error) {
	var since time.Time
	var atSince metricSet
	lastReconciles, lastWrites := -1, -1
	for {
		set, err := m.scrape(ctx)
		now := time.Now()
		if err == nil { // else not up yet; sleep notices an exit
			reconciles, writes := set.reconciles(), set.writes().Total
			changed := reconciles != lastReconciles || writes != lastWrites
			lastReconciles, lastWrites = reconciles, writes
			switch {
			case set.busy() || set.mirrorReconciles() < minReconciles:
				since = time.Time{}
			case changed || since.IsZero():
				since, atSince = now, set
			case now.Sub(since) >= stableFor:
				return since, atSince, nil
			}
		}
		if err := m.sleep(ctx, quietPoll); err != nil {
			return time.Time{}, nil, err
		}
	}
}

// sampleMemory records the peak RSS and heap until the process exits.
func (m *managerProcess) sampleMemory() {
	t := time.NewTicker(memoryEvery)
	defer t.Stop()
	for {
		select {
		case <-m.exited:
			return
		case <-t.C:
			m.sampleRSS()
			// Scraping records the heap; errors only mean it is not up yet.
			if m.metricsURL != "" && m.sinceScrape() >= heapEvery {
				_, _ = m.scrape(context.Background())
			}
		}
	}
}

// sampleRSS reads the kernel's high-water mark of the process's RSS, and its
// RSS and anonymous memory now.
func (m *managerProcess) sampleRSS() {
	peak, current, anon, err := rssBytes(m.pid())
	if err != nil {
		return // exited, or not Linux
	}
	m.mu.Lock()
	m.peakRSS, m.peakAnon = max(m.peakRSS, peak), max(m.peakAnon, anon)
	if n := len(m.phases); n > 0 {
		m.phases[n-1].PeakRSSMiB = max(m.phases[n-1].PeakRSSMiB, float64(current)/(1<<20))
	}
	m.mu.Unlock()
}

// enterPhase closes the current phase with a last sample and starts
// recording the next.
func (m *managerProcess) enterPhase(name string) {
	m.sampleRSS()
	m.mu.Lock()
	m.phases = append(m.phases, phasePeak{Phase: name})
	m.mu.Unlock()
	m.sampleRSS()
}

// memory is what the manager used at its peak.
func (m *managerProcess) memory() processMemory {
	m.mu.Lock()
	defer m.mu.Unlock()
	return processMemory{
		Process:     m.name,
		PeakRSSMiB:  float64(m.peakRSS) / (1 << 20),
		PeakAnonMiB: float64(m.peakAnon) / (1 << 20),
		PeakHeapMiB: m.peakHeap / (1 << 20),
		Phases:      slices.Clone(m.phases),
	}
}

// status is a one-line summary of the latest scrape, for progress lines.
func (m *managerProcess) status() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		return "metrics not up yet"
	}
	return fmt.Sprintf("%d reconciles, %d writes, queued %.0f (mirror %.0f), peak RSS %.0f MiB",
		m.last.reconciles(), m.last.writes().Total, m.last.sum("workqueue_depth", nil),
		m.last.sum("workqueue_depth", mirrorQueue), float64(m.peakRSS)/(1<<20))
}
