package reliability_test

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Fast Lease timings for the fault tests: a killed leader is replaced
// within 4 s + 0.5 s.
var fastLease = []string{"--leader-elect", "--leader-election-namespace=default",
	"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"}

const leaseName = "clusterprofile-manager.open-cluster-management.io"

// leaseHolder is the identity holding the manager's Lease, "" when none.
func leaseHolder(ctx context.Context) string {
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: leaseName}, lease); err != nil {
		return ""
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// Two replicas with --leader-elect; the leader is SIGKILLed in the middle
// of a cold convergence, and the new leader in the middle of a token
// rotation. Each time the standby sends no write while it waits, takes
// over within the Lease (the test prints how fast) and finishes: the exact
// world, nothing missing, nothing extra, every copy with the new token.
func TestLeaderFailoverMidConvergence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "fo", 40)
	slow := append([]string{bundleGates, "--kube-api-qps=15", "--kube-api-burst=15"}, fastLease...)
	// A Lease an earlier run (-count) left names a holder that is gone.
	_ = env.Client.Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: leaseName}})
	a := startManagerProcess(t, "manager-a", slow...)
	if !waitFor(ctx, 30*time.Second, func() bool { return leaseHolder(ctx) != "" }) {
		t.Fatal("manager-a never took the Lease")
	}
	leader := leaseHolder(ctx)
	b := startManagerProcess(t, "manager-b", slow...)
	if !waitFor(ctx, 30*time.Second, func() bool { return fleet.published(ctx) >= 10 }) {
		t.Fatal("manager-a published nothing")
	}
	standbyWrites, err := b.writes(ctx)
	if err != nil {
		t.Fatalf("reading manager-b's metrics: %v", err)
	}
	if standbyWrites != 0 {
		t.Errorf("the standby sent %d writes before it led, want 0", standbyWrites)
	}
	if got := fleet.published(ctx); got == len(fleet.want().Profiles) {
		t.Fatalf("manager-a converged before it was killed; the test needs a slower convergence")
	}
	t.Logf("another writer added its entry and property to %d profiles", fleet.addForeignEntries(ctx, t))

	takeover := killLeader(ctx, t, a, leader)
	fleet.expectExactWorld(t, ctx)
	t.Logf("FIGURE leader takeover after SIGKILL mid convergence: %s (lease 4s, retry 0.5s)", takeover.Round(10*time.Millisecond))

	// The old leader comes back as the standby; the new one is killed mid rotation.
	leader = leaseHolder(ctx)
	a = startManagerProcess(t, "manager-a2", slow...)
	fleet.rotateTokens(ctx, t, "rotated-of-")
	if !waitFor(ctx, 30*time.Second, func() bool { return fleet.rotated(ctx) >= 5 }) {
		t.Fatal("manager-b rotated no copy")
	}
	if n := fleet.rotated(ctx); n == len(fleet.want().Copies) {
		t.Fatalf("manager-b finished the rotation before it was killed; the test needs a slower one")
	}
	if writes, err := a.writes(ctx); err != nil || writes != 0 {
		t.Errorf("the standby sent %d writes (err %v) before it led, want 0", writes, err)
	}
	takeover = killLeader(ctx, t, b, leader)
	fleet.expectExactWorld(t, ctx)
	t.Logf("FIGURE leader takeover after SIGKILL mid token rotation: %s", takeover.Round(10*time.Millisecond))
}

// killLeader SIGKILLs m, which holds the Lease as leader, and returns how
// long until another replica holds it.
func killLeader(ctx context.Context, t *testing.T, m *managerProcess, leader string) time.Duration {
	t.Helper()
	m.kill()
	killed := time.Now()
	if !waitFor(ctx, 30*time.Second, func() bool { h := leaseHolder(ctx); return h != "" && h != leader }) {
		t.Fatal("no standby took over")
	}
	return time.Since(killed)
}
