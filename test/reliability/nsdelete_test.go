package reliability_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// startNamespaceController runs kube-controller-manager's namespace
// controller against the test control plane. envtest runs no
// kube-controller-manager, so a deleted namespace would stay Terminating
// forever; the real controller (from `make ocm-binaries`) empties it in its
// own order and then finalizes it, racing the manager as it does on a hub.
func startNamespaceController(t *testing.T) {
	t.Helper()
	binary := filepath.Join(framework.RepoRoot(), "bin", "ocm", "kube-controller-manager")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("%s not found: run `make ocm-binaries` first", binary)
	}
	kubeconfig, err := env.WriteAdminKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	startProcess(t, "kube-controller-manager", binary, "--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false",
		"--controllers=namespace-controller", "--concurrent-namespace-syncs=5")
}

// A namespace is deleted while the syncer is creating token copies in it
// (and the mirror profiles): the creates the API server now refuses are
// retried with backoff, not in a hot loop; once the namespace is gone no
// copy of it is left anywhere, the other namespace holds exactly its share,
// and re-creating the namespace with its binding brings everything back.
func TestNamespaceDeletedWhileCopiesAreCreated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "nsdel", 20)
	startNamespaceController(t)
	doomed := testFleet{prefix: fleet.prefix, clusters: fleet.clusters, namespaces: fleet.namespaces[1:], tokenPrefix: fleet.tokenPrefix}
	m := startManagerProcess(t, "manager", bundleGates, "--kube-api-qps=20", "--kube-api-burst=20")
	if !waitFor(ctx, 60*time.Second, func() bool { got, err := doomed.observe(ctx); return err == nil && len(got.Copies) > 0 }) {
		t.Fatal("no token copy was created in the namespace to delete")
	}
	got, _ := doomed.observe(ctx)
	before, err := m.counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := env.Client.Delete(ctx, namespaceNamed(doomed.namespaces[0])); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted namespace %s with %d of %d copies made", doomed.namespaces[0], len(got.Copies), len(fleet.clusters))
	expectNamespaceGone(ctx, t, doomed.namespaces[0])
	gone := time.Since(deleted)
	survivors := testFleet{prefix: fleet.prefix, clusters: fleet.clusters, namespaces: fleet.namespaces[:1], tokenPrefix: fleet.tokenPrefix}
	survivors.expectExactWorld(t, ctx)
	for _, cluster := range fleet.clusters {
		expectWorld(t, ctx, cluster, survivors.namespaces, cluster+"-kueue")
	}
	after, err := m.counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE namespace deleted mid-creation: gone after %s; %d reconciles, %d reconcile errors until the fleet settled",
		gone.Round(100*time.Millisecond), after.reconciles-before.reconciles, after.errors-before.errors)
	if n := after.errors - before.errors; n > 200 {
		t.Errorf("%d reconcile errors while the namespace went away: a retry storm", n)
	}
	expectQuiet(ctx, t, m)

	framework.CreateNamespace(ctx, t, env.Client, doomed.namespaces[0])
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(doomed.namespaces[0], fleet.prefix+"-set").Bound(true).Obj())
	fleet.expectExactWorld(t, ctx)
}

func namespaceNamed(name string) *corev1.Namespace {
	ns := &corev1.Namespace{}
	ns.Name = name
	return ns
}

// expectNamespaceGone waits until the namespace controller has emptied and
// finalized the namespace.
func expectNamespaceGone(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if !waitFor(ctx, 90*time.Second, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, types.NamespacedName{Name: name}, &corev1.Namespace{}))
	}) {
		t.Fatalf("namespace %s still there 90 s after its deletion", name)
	}
}

// expectQuiet checks that a settled manager stays settled: no reconcile
// error in the next 3 s (a failing key retried in a loop would show).
func expectQuiet(ctx context.Context, t *testing.T, m *managerProcess) {
	t.Helper()
	before, err := m.counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	after, err := m.counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.errors - before.errors; n > 0 {
		t.Errorf("%d reconcile errors in 3 s after the fleet settled: a key still failing", n)
	}
}
