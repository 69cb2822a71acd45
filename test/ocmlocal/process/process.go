//go:build linux

// Package process starts the local programs of the OCM harness (API
// servers, etcd, controller managers, pod sandboxes), each in its own
// process group with one log file, and stops them again, newest first. It
// also picks the free ports they listen on and polls for what they should
// bring about.
package process

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

// Process is one local program the harness started, in its own process
// group so that stopping it also stops whatever it started.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	exitErr error
}

// Spec says how to start a process.
type Spec struct {
	Name string
	Argv []string
	Env  []string // added to the harness's environment
	Dir  string
	// SysProcAttr replaces the default attributes (own process group, killed
	// with the harness); used for the pod sandbox's namespaces.
	SysProcAttr *syscall.SysProcAttr
}

// Group tracks every running process so that the environment's Stop can
// end them all; their logs go to LogDir, one file per process.
type Group struct {
	LogDir string

	mu      sync.Mutex
	running []*Process
}

// Start starts a process of the group.
func (ps *Group) Start(spec Spec) (*Process, error) {
	if err := os.MkdirAll(ps.LogDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(ps.LogDir, spec.Name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log of %s: %w", spec.Name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = spec.SysProcAttr
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
		return nil, fmt.Errorf("starting %s (%s): %w", spec.Name, spec.Argv[0], err)
	}
	p := &Process{name: spec.Name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.done)
	}()
	ps.mu.Lock()
	ps.running = append(ps.running, p)
	ps.mu.Unlock()
	return p, nil
}

// Name is the process's name, which also names its log.
func (p *Process) Name() string { return p.name }

// LogPath is the file that receives the process's output.
func (p *Process) LogPath() string { return p.logPath }

// Exited reports whether the process has ended, with its error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.exitErr
	default:
		return false, nil
	}
}

// Stop ends the process group: SIGTERM, then SIGKILL after a grace period.
func (p *Process) Stop(grace time.Duration) {
	if ended, _ := p.Exited(); ended {
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

// StopAll stops every process, newest first, in parallel per step so that a
// slow process does not hold the others up.
func (ps *Group) StopAll() {
	ps.mu.Lock()
	running := ps.running
	ps.running = nil
	ps.mu.Unlock()
	var wg sync.WaitGroup
	for i := len(running) - 1; i >= 0; i-- {
		wg.Add(1)
		go func(p *Process) {
			defer wg.Done()
			p.Stop(5 * time.Second)
		}(running[i])
	}
	wg.Wait()
}

// Remove forgets a process that was stopped on its own.
func (ps *Group) Remove(p *Process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i, q := range ps.running {
		if q == p {
			ps.running = append(ps.running[:i], ps.running[i+1:]...)
			return
		}
	}
}

// FreePorts picks n free ports below the kernel's ephemeral range
// (ephemeralPortsFrom). A port the kernel hands out for 127.0.0.1:0 comes
// from that range, and once released any process's outgoing connection
// may take it before the server meant to bind it does: with several local
// OCMs starting at once (the end-to-end suite, the harness's own tests and
// the demo's), an API server then fails with "address already in use".
// Below the range, only another listener can take it.
func FreePorts(n int) ([]int, error) {
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
		l, err := net.Listen("tcp", HostPort(port))
		if err != nil {
			continue // taken
		}
		ls = append(ls, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// lowestPort is the lowest port FreePorts picks: above the well-known and
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

// HostPort is 127.0.0.1:port.
func HostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// Poll calls check until it returns true, an error that is not retriable,
// the process it waits for (if any) dies, or the timeout passes.
func Poll(ctx context.Context, timeout time.Duration, watch *Process, check func(context.Context) (bool, error)) error {
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
			if ended, exitErr := watch.Exited(); ended {
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

// Since is the time since t, rounded for a progress line.
func Since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }
