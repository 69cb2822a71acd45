//go:build linux

// Package podsandbox gives a local process what a kubelet gives a pod's
// containers, so that upstream programs run unchanged: its own network
// namespace (so fixed ports such as :8000 do not collide between "pods", and
// nothing it binds is reachable from outside), its own /etc/hosts (the pod's
// hostAliases and the in-cluster API server name), its Secret volumes at
// their mount paths, and the service account files under
// /var/run/secrets/kubernetes.io/serviceaccount. A container from an
// image runs chrooted into its own copy of the unpacked image instead, with
// the pod's volumes bound inside (see Root); init containers run first, in
// order, each until it succeeds. The sandbox reports each container's
// process in a status file (see Status).
//
// The network namespace has only a loopback interface. Connections leave
// and enter it through unix sockets in the work directory, which are not
// bound to a network namespace: the sandbox listens inside on 127.0.0.1 for
// each outbound address and relays to a socket the harness serves (the
// harness dials the real 127.0.0.1 address), and the harness listens on
// 127.0.0.1 outside for each inbound port and relays to a socket the sandbox
// serves (the sandbox dials the port inside). All traffic stays on loopback.
//
// Run is the body of the ocmlocal-pod program, which the harness starts as
// root in new mount and network namespaces (CLONE_NEWNS|CLONE_NEWNET).
package podsandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Spec describes one sandbox: a pod whose containers share its network
// and mounts.
type Spec struct {
	// InitContainers run one after the other, each until it succeeds
	// (restarted with a growing delay while it fails), before Containers.
	InitContainers []Container `json:"initContainers,omitempty"`
	Containers     []Container `json:"containers"`
	// Scratch is a directory the sandbox may use for its overlay.
	Scratch string `json:"scratch"`
	// Hosts are lines added to /etc/hosts, e.g. "127.0.0.1 kubernetes.default.svc".
	Hosts []string `json:"hosts,omitempty"`
	// Mounts bind directories of the work directory in the sandbox (see
	// bind for where).
	Mounts []Mount `json:"mounts,omitempty"`
	// Outbound addresses: inside, Listen accepts and relays to Socket.
	Outbound []Relay `json:"outbound,omitempty"`
	// Inbound ports: Socket accepts and relays to Dial inside.
	Inbound []Relay `json:"inbound,omitempty"`
	// Forward, if set, is a socket that reaches any port inside, as a
	// kubelet's port-forward does: each connection starts with one line
	// "127.0.0.1:<port>\n" and is then relayed to that address. The harness
	// resolves Services to pods through it (see package servicenet).
	Forward string `json:"forward,omitempty"`
}

// Container is one process of the pod. Like a kubelet with restartPolicy
// Always, the sandbox restarts it when it exits (with a growing delay).
type Container struct {
	Name string   `json:"name"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// Log receives its output; empty means the sandbox's own output.
	Log string `json:"log,omitempty"`
	// Root, if set, runs the container from an unpacked image (see Root);
	// else Argv[0] is a program of the host, run in the sandbox's view of
	// the host's file system.
	Root *Root `json:"root,omitempty"`
}

// Mount is a bind mount.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Relay joins a TCP address inside the sandbox and a unix socket.
type Relay struct {
	Listen string `json:"listen,omitempty"`
	Socket string `json:"socket"`
	Dial   string `json:"dial,omitempty"`
}

// Run sets the sandbox up from the spec file, runs the process and returns
// its exit code.
func Run(specPath string) (int, error) {
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return 1, err
	}
	var spec Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return 1, fmt.Errorf("reading %s: %w", specPath, err)
	}
	if err := setUpFilesystem(spec); err != nil {
		return 1, fmt.Errorf("filesystem: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return 1, fmt.Errorf("loopback: %w", err)
	}
	if err := startRelays(spec); err != nil {
		return 1, fmt.Errorf("relays: %w", err)
	}
	return runContainers(spec)
}

// setUpFilesystem makes /etc and /run private and writable (an overlay on
// /etc, a tmpfs on /run), then writes /etc/hosts and binds the mounts.
func setUpFilesystem(spec Spec) error {
	// Nothing mounted here may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	layer := filepath.Join(spec.Scratch, "etc-layer")
	if err := os.MkdirAll(layer, 0o755); err != nil {
		return err
	}
	// The overlay's upper layer lives on a tmpfs: overlayfs refuses an upper
	// directory on some file systems, and this one disappears with the pod.
	if err := unix.Mount("tmpfs", layer, "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs for /etc overlay: %w", err)
	}
	upper, work := filepath.Join(layer, "upper"), filepath.Join(layer, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("overlay", "/etc", "overlay", 0, "lowerdir=/etc,upperdir="+upper+",workdir="+work); err != nil {
		return fmt.Errorf("overlay on /etc: %w", err)
	}
	if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs on /run: %w", err)
	}
	if err := appendHosts(spec.Hosts); err != nil {
		return err
	}
	// Containers run from images get the pod's hosts file of their own.
	hosts := "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n" + strings.Join(spec.Hosts, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(spec.Scratch, hostsFile), []byte(hosts), 0o644); err != nil {
		return err
	}
	private := map[string]bool{}
	for _, m := range spec.Mounts {
		if err := bind(m, private); err != nil {
			return err
		}
	}
	return nil
}

// UnusedTop tells whether a path's top-level directory is one the host does
// not use (missing, or an empty directory), so that a sandbox may put a
// private tmpfs there.
func UnusedTop(path string) bool {
	top := topDir(path)
	if top == "" {
		return false
	}
	entries, err := os.ReadDir(top)
	return os.IsNotExist(err) || (err == nil && len(entries) == 0)
}

func topDir(path string) string {
	rest, ok := strings.CutPrefix(filepath.Clean(path), "/")
	if !ok || rest == "" {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	return "/" + first
}

func appendHosts(lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile("/etc/hosts", os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	return err
}

// bind mounts m.Source at m.Target inside the sandbox. /etc and /run are
// private already. Under /tmp the directory is created on the host's /tmp
// (shared: the work directory, its sockets and logs live there), but the
// mount itself stays in the sandbox's namespace: controller-runtime's
// webhook servers read their certificates from
// /tmp/k8s-webhook-server/serving-certs, which their Deployments mount
// there and their arguments never name. Elsewhere the top-level directory
// must be unused on the host (UnusedTop): the sandbox mounts a private
// tmpfs on it (the host keeps at most an empty mount point) and binds
// beneath, e.g. the klusterlet agent's /spoke/hub-kubeconfig, a default
// path it writes its hub kubeconfig to.
func bind(m Mount, private map[string]bool) error {
	target := filepath.Clean(m.Target)
	if strings.HasPrefix(target, "/var/run/") {
		target = "/run/" + strings.TrimPrefix(target, "/var/run/")
	}
	if !strings.HasPrefix(target, "/etc/") && !strings.HasPrefix(target, "/run/") && !strings.HasPrefix(target, "/tmp/") {
		top := topDir(target)
		if !private[top] {
			if !UnusedTop(target) {
				return fmt.Errorf("mount target %s: %s is used on the host", m.Target, top)
			}
			if err := os.MkdirAll(top, 0o755); err != nil {
				return err
			}
			if err := unix.Mount("tmpfs", top, "tmpfs", 0, "mode=0755"); err != nil {
				return fmt.Errorf("tmpfs on %s: %w", top, err)
			}
			private[top] = true
		}
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(m.Source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s at %s: %w", m.Source, target, err)
	}
	return nil
}

// loopbackUp brings lo up; a new network namespace starts with it down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// hostsFile is the pod's /etc/hosts in the scratch directory.
const hostsFile = "hosts"

func startRelays(spec Spec) error {
	for _, r := range spec.Outbound {
		l, err := net.Listen("tcp", r.Listen)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", r.Listen, err)
		}
		go serve(l, "unix", r.Socket)
	}
	for _, r := range spec.Inbound {
		_ = os.Remove(r.Socket)
		l, err := net.Listen("unix", r.Socket)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", r.Socket, err)
		}
		go serve(l, "tcp", r.Dial)
	}
	if spec.Forward != "" {
		_ = os.Remove(spec.Forward)
		l, err := net.Listen("unix", spec.Forward)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", spec.Forward, err)
		}
		go serveForward(l)
	}
	return nil
}

// serveForward relays each connection to the loopback address named on its
// first line. Only loopback: the sandbox has no other network.
func serveForward(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			addr, err := readLine(conn)
			if host, _, splitErr := net.SplitHostPort(addr); err != nil || splitErr != nil || host != "127.0.0.1" {
				conn.Close()
				return
			}
			Pipe(conn, "tcp", addr)
		}()
	}
}

// readLine reads up to "\n" one byte at a time, so that nothing after the
// line is consumed from the connection.
func readLine(conn net.Conn) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 64 {
		if _, err := conn.Read(b); err != nil {
			return "", err
		}
		if b[0] == '\n' {
			return string(line), nil
		}
		line = append(line, b[0])
	}
	return "", fmt.Errorf("forward line too long")
}

// serve relays every connection accepted on l to network/address.
func serve(l net.Listener, network, address string) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go Pipe(conn, network, address)
	}
}

// Pipe dials network/address and copies both ways until either side ends.
func Pipe(conn net.Conn, network, address string) {
	peer, err := net.Dial(network, address)
	if err != nil {
		conn.Close()
		return
	}
	Join(conn, peer)
}

// Join copies between two connections both ways until either side ends,
// then closes both.
func Join(conn, peer net.Conn) {
	defer conn.Close()
	defer peer.Close()
	done := make(chan struct{}, 2)
	copyHalf := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go copyHalf(peer, conn)
	go copyHalf(conn, peer)
	<-done
	<-done
}
