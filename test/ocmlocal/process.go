//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one local program the harness started, in its own process
// group so that stopping it also stops whatever it started.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	exitErr error
}

// processSpec says how to start a process.
type processSpec struct {
	name string
	argv []string
	env  []string // added to the harness's environment
	dir  string
	// sysProcAttr replaces the default attributes (own process group, killed
	// with the harness); used for the pod sandbox's namespaces.
	sysProcAttr *syscall.SysProcAttr
}

// processes tracks every running process so Stop can end them all.
type processes struct {
	mu      sync.Mutex
	running []*process
	logDir  string
}

func (ps *processes) start(spec processSpec) (*process, error) {
	if err := os.MkdirAll(ps.logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(ps.logDir, spec.name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log of %s: %w", spec.name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.Dir = spec.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = spec.sysProcAttr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Own process group: Stop signals the group, which reaches children the
	// process started. Pdeathsig: if the harness dies without Stop (test
	// binary killed), the kernel sends the process SIGTERM, so it ends as on
	// Stop (a pod sandbox passes SIGTERM on to its containers).
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", spec.name, spec.argv[0], err)
	}
	p := &process{name: spec.name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.done)
	}()
	ps.mu.Lock()
	ps.running = append(ps.running, p)
	ps.mu.Unlock()
	return p, nil
}

// exited reports whether the process has ended, with its error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.exitErr
	default:
		return false, nil
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after a grace period.
func (p *process) stop(grace time.Duration) {
	if ended, _ := p.exited(); ended {
		return
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
	// Children that ignored SIGTERM while their leader exited.
	_ = syscall.Kill(pgid, syscall.SIGKILL)
}

// stopAll stops every process, newest first, in parallel per step so that a
// slow process does not hold the others up.
func (ps *processes) stopAll() {
	ps.mu.Lock()
	running := ps.running
	ps.running = nil
	ps.mu.Unlock()
	var wg sync.WaitGroup
	for i := len(running) - 1; i >= 0; i-- {
		wg.Add(1)
		go func(p *process) {
			defer wg.Done()
			p.stop(5 * time.Second)
		}(running[i])
	}
	wg.Wait()
}

// remove forgets a process that was stopped on its own.
func (ps *processes) remove(p *process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i, q := range ps.running {
		if q == p {
			ps.running = append(ps.running[:i], ps.running[i+1:]...)
			return
		}
	}
}

// freePorts picks n free ports below the kernel's ephemeral range
// (ephemeralPortsFrom). A port the kernel hands out for 127.0.0.1:0 comes
// from that range, and once released any process's outgoing connection
// may take it before the server meant to bind it does: with several local
// OCMs starting at once (the end-to-end suite, the harness's own tests and
// the demo's), an API server then fails with "address already in use".
// Below the range, only another listener can take it.
func freePorts(n int) ([]int, error) {
	// Hold all listeners until every port is chosen, so none repeats.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	high := ephemeralPortsFrom()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no %d free ports between %d and %d", n, lowestPort, high)
		}
		port := lowestPort + rand.IntN(high-lowestPort)
		l, err := net.Listen("tcp", hostPort(port))
		if err != nil {
			continue // taken
		}
		ls = append(ls, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// lowestPort is the lowest port freePorts picks: above the well-known and
// the usual fixed service ports.
const lowestPort = 10000

// ephemeralPortsFrom is where the kernel's ephemeral ports start (32768 by
// default; net.ipv4.ip_local_port_range).
func ephemeralPortsFrom() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	from, err := strconv.Atoi(fields[0])
	if err != nil || from <= lowestPort+1000 {
		return 32768
	}
	return from
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// poll calls check until it returns true, an error that is not retriable,
// the process it waits for dies, or the timeout passes.
func poll(ctx context.Context, timeout time.Duration, watch *process, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if watch != nil {
			if ended, exitErr := watch.exited(); ended {
				return fmt.Errorf("%s exited (%v); see %s", watch.name, exitErr, watch.logPath)
			}
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last error: %w)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Process is a program started through the environment: it logs into the
// environment's log directory and is stopped with it.
type Process struct {
	env  *Env
	proc *process
}

// StartProcess runs a program on the host (not sandboxed) as part of the
// environment, e.g. this bundle's manager against the hub; extraEnv is
// added to the harness's environment.
func (e *Env) StartProcess(name string, argv []string, extraEnv ...string) (*Process, error) {
	p, err := e.procs.start(processSpec{name: name, argv: argv, env: extraEnv})
	if err != nil {
		return nil, err
	}
	return &Process{env: e, proc: p}, nil
}

// Stop ends the process (SIGTERM, then SIGKILL after 10 s).
func (p *Process) Stop() {
	p.proc.stop(10 * time.Second)
	p.env.procs.remove(p.proc)
}

// LogPath is the file that receives the process's output.
func (p *Process) LogPath() string { return p.proc.logPath }

// Exited tells whether the process has ended, and how.
func (p *Process) Exited() (bool, error) { return p.proc.exited() }
