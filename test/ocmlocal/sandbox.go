//go:build linux

package ocmlocal

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// sandboxSpec describes a process to run in a pod sandbox.
type sandboxSpec struct {
	name string
	// argv and env describe a single process; containers, several.
	argv           []string
	env            []string // the whole environment of the process
	initContainers []podsandbox.Container
	containers     []podsandbox.Container
	hosts          []string // extra /etc/hosts lines
	mounts         []podsandbox.Mount
	// outbound: addresses inside the sandbox that reach 127.0.0.1 ports of
	// the host, e.g. 127.0.0.1:443 → the managed API server's port.
	outbound []route
	// inbound: ports inside the sandbox reachable from 127.0.0.1 outside.
	inbound []route
	// forward: give the sandbox a port-forward socket (sandboxed.forward).
	forward bool
}

// route joins an address inside a sandbox and one on the host.
type route struct{ inside, host string }

// sandboxed is a running sandbox: its process and the host side of its relays.
type sandboxed struct {
	proc *process.Process
	// forward is the sandbox's port-forward socket, if it has one.
	forward   string
	mu        sync.Mutex
	listeners []net.Listener
}

func (s *sandboxed) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		l.Close()
	}
	s.listeners = nil
}

// startSandboxed starts the process in new mount and network namespaces
// through the ocmlocal-pod program.
func (e *Env) startSandboxed(spec sandboxSpec) (*sandboxed, error) {
	dir := filepath.Join(e.WorkDir, "pods", spec.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &sandboxed{}
	podSpec := podsandbox.Spec{InitContainers: spec.initContainers, Containers: spec.containers, Scratch: dir, Hosts: spec.hosts, Mounts: spec.mounts}
	if spec.argv != nil {
		podSpec.Containers = append(podSpec.Containers, podsandbox.Container{Name: spec.name, Argv: spec.argv, Env: spec.env})
	}
	// Unix socket paths must stay under 108 bytes: short names in one
	// directory, numbered per sandbox.
	sockets := filepath.Join(e.WorkDir, "s")
	if err := os.MkdirAll(sockets, 0o755); err != nil {
		return nil, err
	}
	id := strconv.Itoa(int(e.sandboxCount.Add(1)))
	for i, r := range spec.outbound {
		sock := filepath.Join(sockets, id+"o"+strconv.Itoa(i))
		if err := s.relay("unix", sock, "tcp", r.host); err != nil {
			s.close()
			return nil, err
		}
		podSpec.Outbound = append(podSpec.Outbound, podsandbox.Relay{Listen: r.inside, Socket: sock})
	}
	for i, r := range spec.inbound {
		sock := filepath.Join(sockets, id+"i"+strconv.Itoa(i))
		if err := s.relay("tcp", r.host, "unix", sock); err != nil {
			s.close()
			return nil, err
		}
		podSpec.Inbound = append(podSpec.Inbound, podsandbox.Relay{Socket: sock, Dial: r.inside})
	}
	if spec.forward {
		s.forward = filepath.Join(sockets, id+"f")
		podSpec.Forward = s.forward
	}
	raw, err := json.MarshalIndent(podSpec, "", "  ")
	if err != nil {
		return nil, err
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, raw, 0o600); err != nil {
		return nil, err
	}
	s.proc, err = e.procs.Start(process.Spec{
		Name: spec.name,
		Argv: []string{e.bins.PodRunner, specPath},
		// New mount and network namespaces: see package podsandbox.
		SysProcAttr: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET},
	})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// relay listens on the host and pipes every connection to the other end.
func (s *sandboxed) relay(listenNet, listenAddr, dialNet, dialAddr string) error {
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

// podEnv is the base environment of a sandboxed process: like a
// container's, it does not inherit the harness's variables.
func podEnv(extra ...string) []string {
	return append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp"}, extra...)
}

// sameRoute reaches a host port at the same address inside.
func sameRoute(port int) route {
	return route{inside: process.HostPort(port), host: process.HostPort(port)}
}
