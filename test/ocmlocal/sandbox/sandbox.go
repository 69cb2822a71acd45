//go:build linux

// Package sandbox starts pod sandboxes for the harness's kubelet: the
// ocmlocal-pod program (package podsandbox) in new mount and network
// namespaces, with the pod's containers, mounts and /etc/hosts lines, and
// on the host the relays through which its traffic leaves and enters (unix
// sockets, which no network namespace bounds).
package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// Spec describes a process, or a pod's containers, to run in a sandbox.
type Spec struct {
	Name string
	// Argv and Env describe a single process; Containers, several.
	Argv           []string
	Env            []string // the whole environment of the process
	InitContainers []podsandbox.Container
	Containers     []podsandbox.Container
	Hosts          []string // extra /etc/hosts lines
	Mounts         []podsandbox.Mount
	// Outbound: addresses inside the sandbox that reach 127.0.0.1 ports of
	// the host, e.g. 127.0.0.1:443 → the managed API server's port.
	Outbound []Route
	// Inbound: ports inside the sandbox reachable from 127.0.0.1 outside.
	Inbound []Route
	// Forward: give the sandbox a port-forward socket (Sandbox.Forward).
	Forward bool
}

// Route joins an address inside a sandbox and one on the host.
type Route struct{ Inside, Host string }

// SameRoute reaches a host port at the same address inside.
func SameRoute(port int) Route {
	return Route{Inside: process.HostPort(port), Host: process.HostPort(port)}
}

// Runner starts sandboxes with the ocmlocal-pod program, their files under
// WorkDir and their processes in Procs.
type Runner struct {
	WorkDir string
	// Program is the ocmlocal-pod binary (binaries.BuildPodRunner).
	Program string
	Procs   *process.Group
	// count numbers the sandboxes (for short socket names).
	count atomic.Int32
}

// Sandbox is a running sandbox: its process and the host side of its relays.
type Sandbox struct {
	proc  *process.Process
	procs *process.Group
	// forward is the sandbox's port-forward socket, if it has one.
	forward   string
	mu        sync.Mutex
	listeners []net.Listener
}

// Process is the sandbox's process (ocmlocal-pod).
func (s *Sandbox) Process() *process.Process { return s.proc }

// Forward is the sandbox's port-forward socket ("" without one): a
// connection there that first sends an address ("127.0.0.1:port\n")
// reaches that address inside the sandbox.
func (s *Sandbox) Forward() string { return s.forward }

// Stop ends the sandbox's process and closes its relays.
func (s *Sandbox) Stop(grace time.Duration) {
	s.proc.Stop(grace)
	s.procs.Remove(s.proc)
	s.close()
}

func (s *Sandbox) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		l.Close()
	}
	s.listeners = nil
}

// Start starts a sandbox in new mount and network namespaces through the
// ocmlocal-pod program.
func (r *Runner) Start(spec Spec) (*Sandbox, error) {
	dir := filepath.Join(r.WorkDir, "pods", spec.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Sandbox{procs: r.Procs}
	podSpec := podsandbox.Spec{InitContainers: spec.InitContainers, Containers: spec.Containers, Scratch: dir, Hosts: spec.Hosts, Mounts: spec.Mounts}
	if spec.Argv != nil {
		podSpec.Containers = append(podSpec.Containers, podsandbox.Container{Name: spec.Name, Argv: spec.Argv, Env: spec.Env})
	}
	if err := r.relays(s, spec, &podSpec); err != nil {
		return nil, err
	}
	raw, err := json.MarshalIndent(podSpec, "", "  ")
	if err != nil {
		return nil, err
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, raw, 0o600); err != nil {
		return nil, err
	}
	s.proc, err = r.Procs.Start(process.Spec{
		Name: spec.Name,
		Argv: []string{r.Program, specPath},
		// New mount and network namespaces: see package podsandbox.
		SysProcAttr: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET},
	})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// relays listens on the host for the sandbox's outbound and inbound
// routes and names their sockets in podSpec, with its port-forward socket
// when spec asks for one.
func (r *Runner) relays(s *Sandbox, spec Spec, podSpec *podsandbox.Spec) error {
	// Unix socket paths must stay under 108 bytes: short names in one
	// directory, numbered per sandbox.
	sockets := filepath.Join(r.WorkDir, "s")
	if err := os.MkdirAll(sockets, 0o755); err != nil {
		return err
	}
	id := strconv.Itoa(int(r.count.Add(1)))
	for i, route := range spec.Outbound {
		sock := filepath.Join(sockets, id+"o"+strconv.Itoa(i))
		if err := s.relay("unix", sock, "tcp", route.Host); err != nil {
			s.close()
			return err
		}
		podSpec.Outbound = append(podSpec.Outbound, podsandbox.Relay{Listen: route.Inside, Socket: sock})
	}
	for i, route := range spec.Inbound {
		sock := filepath.Join(sockets, id+"i"+strconv.Itoa(i))
		if err := s.relay("tcp", route.Host, "unix", sock); err != nil {
			s.close()
			return err
		}
		podSpec.Inbound = append(podSpec.Inbound, podsandbox.Relay{Socket: sock, Dial: route.Inside})
	}
	if spec.Forward {
		s.forward = filepath.Join(sockets, id+"f")
		podSpec.Forward = s.forward
	}
	return nil
}

// relay listens on the host and pipes every connection to the other end.
func (s *Sandbox) relay(listenNet, listenAddr, dialNet, dialAddr string) error {
	if listenNet == "unix" {
		_ = os.Remove(listenAddr)
	}
	l, err := net.Listen(listenNet, listenAddr)
	if err != nil {
		return fmt.Errorf("relay %s → %s: %w", listenAddr, dialAddr, err)
	}
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go podsandbox.Pipe(conn, dialNet, dialAddr)
		}
	}()
	return nil
}

// PodEnv is the base environment of a sandboxed process: like a
// container's, it does not inherit the harness's variables.
func PodEnv(extra ...string) []string {
	return append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp"}, extra...)
}
