package reliability_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// managerProcess is bin/clusterprofile-manager (`make build`) running
// against the test control plane as it runs in a pod: its own process, a
// kubeconfig, flags, metrics over plain HTTP for the test to read.
type managerProcess struct {
	name    string
	cmd     *exec.Cmd
	metrics string
	log     string
	exited  chan struct{}
	err     error
}

// startManagerProcess runs the manager binary with args (plus kubeconfig,
// metrics and probe addresses) until the test ends or it is stopped.
func startManagerProcess(t *testing.T, name string, args ...string) *managerProcess {
	t.Helper()
	return startManagerProcessOn(t, env, name, args...)
}

// startManagerProcessOn is startManagerProcess against another control plane.
func startManagerProcessOn(t *testing.T, e *framework.Env, name string, args ...string) *managerProcess {
	t.Helper()
	binary := filepath.Join(framework.RepoRoot(), "bin", "clusterprofile-manager")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("%s not found: run `make build` first", binary)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	raw, err := e.AdminKubeconfig()
	if err == nil {
		err = os.WriteFile(kubeconfig, raw, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	args = append([]string{"--kubeconfig=" + kubeconfig, "--metrics-secure=false",
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--health-probe-bind-address=0"}, args...)
	m := startProcess(t, name, binary, args...)
	m.metrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	return m
}

// startProcess runs binary with args, its output in a log the test prints
// when it fails, until the test ends or it is stopped.
func startProcess(t *testing.T, name, binary string, args ...string) *managerProcess {
	t.Helper()
	m := &managerProcess{name: name, log: filepath.Join(t.TempDir(), name+".log"), exited: make(chan struct{})}
	logFile, err := os.Create(m.log)
	if err != nil {
		t.Fatal(err)
	}
	m.cmd = exec.Command(binary, args...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		m.err = m.cmd.Wait()
		_ = logFile.Close()
		close(m.exited)
	}()
	t.Cleanup(func() {
		m.signal(syscall.SIGKILL)
		<-m.exited
		if t.Failed() {
			out, _ := os.ReadFile(m.log)
			t.Logf("log of %s (last 3000 bytes):\n%s", name, tail(string(out), 3000))
		}
	})
	return m
}

func (m *managerProcess) signal(sig syscall.Signal) {
	select {
	case <-m.exited:
	default:
		_ = m.cmd.Process.Signal(sig)
	}
}

// kill ends the process at once, as a lost node or the OOM killer does:
// no step-down, no in-flight write finished.
func (m *managerProcess) kill() {
	m.signal(syscall.SIGKILL)
	<-m.exited
}

// writes is the number of POST, PUT, PATCH and DELETE requests the process
// has sent, by its client-go metrics (every request the manager makes).
func (m *managerProcess) writes(ctx context.Context) (int, error) {
	requests, err := m.requestsByMethod(ctx)
	if err != nil {
		return 0, err
	}
	return requests["POST"] + requests["PUT"] + requests["PATCH"] + requests["DELETE"], nil
}

func (m *managerProcess) requestsByMethod(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	err := m.scrape(ctx, func(name string, labels map[string]string, value float64) {
		if name == "rest_client_requests_total" {
			out[labels["method"]] += int(value)
		}
	})
	return out, err
}

// scrape reads the Prometheus text exposition of the process's metrics.
func (m *managerProcess) scrape(ctx context.Context, sample func(name string, labels map[string]string, value float64)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.metrics, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, value, ok := parseSample(line)
		if ok {
			sample(name, labels, value)
		}
	}
	return scanner.Err()
}

// parseSample reads `name{a="x",b="y"} value`; label values here hold no
// commas or quotes.
func parseSample(line string) (string, map[string]string, float64, bool) {
	space := strings.LastIndexByte(line, ' ')
	if space < 0 {
		return "", nil, 0, false
	}
	value, err := strconv.ParseFloat(line[space+1:], 64)
	if err != nil {
		return "", nil, 0, false
	}
	series := line[:space]
	labels := map[string]string{}
	name := series
	if open := strings.IndexByte(series, '{'); open >= 0 {
		name = series[:open]
		for _, pair := range strings.Split(strings.TrimSuffix(series[open+1:], "}"), ",") {
			if k, v, ok := strings.Cut(pair, "="); ok {
				labels[k] = strings.Trim(v, `"`)
			}
		}
	}
	return name, labels, value, true
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// waitFor polls cond every 100 ms until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
