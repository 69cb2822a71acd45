package reliability_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
)

// restartableAPIServer is a kube-apiserver of the test's own on the
// control plane's etcd (envtest gives its API server new certificates on
// every start, so it cannot be restarted under a running client). Every
// start serves the same port with the same certificates, as a restarted
// API server of a real hub does.
type restartableAPIServer struct {
	argv       []string
	kubeconfig string
	process    *managerProcess
}

func startRestartableAPIServer(t *testing.T) *restartableAPIServer {
	t.Helper()
	assets, err := framework.BinaryAssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := url.Parse(env.EtcdURL())
	if err != nil {
		t.Fatal(err)
	}
	etcdPort, err := strconv.Atoi(etcd.Port())
	if err != nil {
		t.Fatalf("reading the etcd port of %s: %v", etcd, err)
	}
	argv, kubeconfig, err := controlplane.StandaloneAPIServer(filepath.Join(assets, "kube-apiserver"), t.TempDir(), freePort(t), etcdPort)
	if err != nil {
		t.Fatal(err)
	}
	// On SIGTERM, end open watches within 2 s instead of waiting for them
	// up to the shutdown timeout (60 s), so the stop takes seconds.
	argv = append(argv, "--shutdown-watch-termination-grace-period=2s")
	a := &restartableAPIServer{argv: argv, kubeconfig: kubeconfig}
	a.start(t)
	return a
}

// start runs kube-apiserver and waits until it is ready.
func (a *restartableAPIServer) start(t *testing.T) {
	t.Helper()
	a.process = startProcess(t, "kube-apiserver", a.argv[0], a.argv[1:]...)
	cfg, err := clientcmd.BuildConfigFromFlags("", a.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 2 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ready := func() bool {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		return err == nil && string(body) == "ok"
	}
	if !waitFor(context.Background(), 90*time.Second, ready) {
		t.Fatal("kube-apiserver not ready within 90 s")
	}
}

// stop shuts kube-apiserver down as its pod's termination does: SIGTERM
// (it stops listening and drains), then SIGKILL after a 10 s grace period
// (it waits up to its 60 s shutdown timeout for open watches to end), and
// waits until it has exited.
func (a *restartableAPIServer) stop(t *testing.T) {
	t.Helper()
	a.process.signal(syscall.SIGTERM)
	select {
	case <-a.process.exited:
		t.Log("kube-apiserver exited after SIGTERM")
	case <-time.After(10 * time.Second):
		a.process.kill()
		t.Log("kube-apiserver killed 10 s after SIGTERM (grace period over)")
	}
}

// kube-apiserver itself stops (SIGTERM) for 5 s while the world changes
// (written through the control plane's other API server, on the same etcd)
// and starts again on the same port and etcd: the manager's watches re-list
// or resume, the change lands in the exact world, and while the API server
// is down the manager retries with backoff, not in a hot loop.
func TestAPIServerRestartMidChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "restart", 10)
	api := startRestartableAPIServer(t)
	m := startManagerProcess(t, "manager", bundleGates, "--kubeconfig="+api.kubeconfig)
	fleet.expectExactWorld(t, ctx)

	stopped := time.Now()
	api.stop(t)
	before, during := unbindWhileAway(ctx, t, m, fleet)
	api.start(t)
	t.Logf("kube-apiserver down for %s (SIGTERM to ready)", time.Since(stopped).Round(100*time.Millisecond))
	expectUnboundWhileAway(ctx, t, fleet, before, during, "kube-apiserver was stopped")
}
