package agent_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// The binary, wired by its main: flags, both kubeconfigs, the manager's
// probes answering from the agent's checks, and a clean exit on SIGTERM.
func TestBinary(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "binary"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("binary-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)

	dir := t.TempDir()
	bin := filepath.Join(dir, "clusterprofile-agent")
	build := exec.Command("go", "build", "-o", bin, "./cmd/clusterprofile-agent")
	build.Dir = framework.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the agent: %v\n%s", err, out)
	}
	probeAddr := freeAddress(t)
	cmd := exec.Command(bin, "--hub-kubeconfig="+writeKubeconfig(t, hub, dir, "hub"),
		"--kubeconfig="+writeKubeconfig(t, managed, dir, "managed"),
		"--cluster-name="+cluster, "--addon-namespace="+addonNamespace, "--period=1s",
		"--health-probe-bind-address="+probeAddr)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	expectCondition(t, ctx, cluster, agentapi.ConditionControlPlaneHealthy, metav1.ConditionTrue, agentapi.ReasonAgentChecksPassed)
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
	// The manager's probe endpoints, with the agent's checks under their names.
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(getProbe(g, probeAddr, "/healthz?verbose")).To(Equal(probeAnswer{http.StatusOK, []string{"[+]ping ok", "[+]rounds ok"}}))
		g.Expect(getProbe(g, probeAddr, "/readyz?verbose")).To(Equal(probeAnswer{http.StatusOK, []string{"[+]first-round ok", "[+]ping ok"}}))
		for _, path := range []string{"/healthz", "/healthz/rounds", "/readyz", "/readyz/first-round"} {
			g.Expect(getProbe(g, probeAddr, path).code).To(Equal(http.StatusOK), path)
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// SIGTERM stops the manager, which gives the agent its graceful shutdown
	// timeout; the agent needs far less, and exits 0.
	signalled := time.Now()
	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	select {
	case err := <-exited:
		g.Expect(err).NotTo(HaveOccurred(), "exit status after SIGTERM")
		t.Logf("the agent exited %s after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	case <-time.After(agent.GracefulShutdownTimeout):
		t.Fatalf("the agent did not exit within its graceful shutdown timeout (%s) of SIGTERM", agent.GracefulShutdownTimeout)
	}
}

// writeKubeconfig writes an admin kubeconfig of env into dir and returns its path.
func writeKubeconfig(t *testing.T, env *framework.Env, dir, name string) string {
	t.Helper()
	data, err := env.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
