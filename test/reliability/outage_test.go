package reliability_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
)

// cutProxy forwards TCP to the API server from an address of its own, and
// can cut the line: while down, its port refuses connections and every
// open one (watches included) is broken, as when kube-apiserver restarts on
// the same address.
type cutProxy struct {
	addr, target string
	mu           sync.Mutex
	listener     net.Listener
	conns        map[net.Conn]struct{}
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	p := &cutProxy{addr: net.JoinHostPort("127.0.0.1", itoa(freePort(t))), target: target, conns: map[net.Conn]struct{}{}}
	if err := p.up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.down)
	return p
}

func (p *cutProxy) up() error {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.listener = l
	p.mu.Unlock()
	go p.serve(l)
	return nil
}

func (p *cutProxy) serve(l net.Listener) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.track(in, out)
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (p *cutProxy) track(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
}

// down closes the port and breaks every open connection.
func (p *cutProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener != nil {
		_ = p.listener.Close()
		p.listener = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// kubeconfigVia writes the admin kubeconfig with its server moved to addr.
func kubeconfigVia(t *testing.T, addr string) string {
	t.Helper()
	raw, err := env.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	config, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range config.Clusters {
		cluster.Server = "https://" + addr
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The API server is unreachable for 5 s (connections cut, port closed)
// while the world changes: when it is back, watches resume or re-list and
// the change lands; while it is down, the manager retries with backoff, not
// in a hot loop (the test prints its reconciles and failed requests).
func TestAPIServerOutageMidChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "outage", 10)
	proxy := startCutProxy(t, apiServerAddress(t))
	m := startManagerProcess(t, "manager", bundleGates, "--kubeconfig="+kubeconfigVia(t, proxy.addr))
	fleet.expectExactWorld(t, ctx)

	proxy.down()
	before, during := unbindWhileAway(ctx, t, m, fleet)
	if err := proxy.up(); err != nil {
		t.Fatalf("bringing the API server's address back: %v", err)
	}
	expectUnboundWhileAway(ctx, t, fleet, before, during, "the API server was down")
}

// expectUnboundWhileAway checks what unbindWhileAway leaves once the API
// server is back: exactly the first namespace's share and nothing in the
// second, and no hot loop while the manager could not reach the server
// (away says how).
func expectUnboundWhileAway(ctx context.Context, t *testing.T, fleet testFleet, before, during processCounts, away string) {
	t.Helper()
	unbound := testFleet{prefix: fleet.prefix, namespaces: fleet.namespaces[1:]}
	fleet.namespaces = fleet.namespaces[:1]
	fleet.expectExactWorld(t, ctx)
	unbound.expectExactWorld(t, ctx)
	t.Logf("FIGURE while %s for 5 s: %d reconciles, %d reconcile errors, %d failed requests",
		away, during.reconciles-before.reconciles, during.errors-before.errors, during.failedRequests-before.failedRequests)
	if n := during.reconciles - before.reconciles; n > 200 {
		t.Errorf("%d reconciles in 5 s while %s: a hot loop", n, away)
	}
}

// unbindWhileAway deletes the binding of the fleet's second namespace while
// the manager cannot reach the API server, and returns the manager's counts
// from before the change and after 5 s of it.
func unbindWhileAway(ctx context.Context, t *testing.T, m *managerProcess, fleet testFleet) (before, during processCounts) {
	t.Helper()
	before, err := m.counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: fleet.namespaces[1], Name: fleet.prefix + "-set"}}
	if err := env.Client.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if during, err = m.counts(ctx); err != nil {
		t.Fatal(err)
	}
	return before, during
}

// processCounts are a manager's reconciles, reconcile errors and failed
// requests (no response) so far, from its metrics.
type processCounts struct{ reconciles, errors, failedRequests int }

func (m *managerProcess) counts(ctx context.Context) (processCounts, error) {
	var c processCounts
	err := m.scrape(ctx, func(name string, labels map[string]string, value float64) {
		switch {
		case name == "controller_runtime_reconcile_total":
			c.reconciles += int(value)
		case name == "controller_runtime_reconcile_errors_total":
			c.errors += int(value)
		case name == "rest_client_requests_total" && labels["code"] == "<error>":
			c.failedRequests += int(value)
		}
	})
	return c, err
}

func itoa(i int) string { return strconv.Itoa(i) }

// apiServerAddress is the host:port the test control plane serves on.
func apiServerAddress(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil || u.Host == "" {
		t.Fatalf("reading the API server address from %q: %v", env.Config.Host, err)
	}
	return u.Host
}
