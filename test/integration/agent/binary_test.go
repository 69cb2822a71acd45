package agent_test

import (
	"fmt"
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

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// The binary, wired by its main: flags, both kubeconfigs, probes, and a
// clean exit on SIGTERM.
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
	kubeconfig := func(env *framework.Env, name string) string {
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
	probeAddr := freeAddress(t)
	cmd := exec.Command(bin, "--hub-kubeconfig="+kubeconfig(hub, "hub"), "--kubeconfig="+kubeconfig(managed, "managed"),
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
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, "1/1 nodes Ready")
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(fmt.Sprintf("http://%s%s", probeAddr, path))
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		NewWithT(t).Expect(resp.StatusCode).To(Equal(http.StatusOK), path)
	}

	NewWithT(t).Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	select {
	case err := <-exited:
		NewWithT(t).Expect(err).NotTo(HaveOccurred(), "exit status after SIGTERM")
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not exit within 10s of SIGTERM")
	}
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
