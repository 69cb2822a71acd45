package reliability_test

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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
// of a cold convergence. The standby sends no write while it waits, takes
// over within the Lease (the test prints how fast) and finishes: the exact
// world, nothing missing, nothing extra.
func TestLeaderFailoverMidConvergence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "fo", 40)
	slow := append([]string{bundleGates, "--kube-api-qps=15", "--kube-api-burst=15"}, fastLease...)
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

	a.kill()
	killed := time.Now()
	if !waitFor(ctx, 30*time.Second, func() bool { h := leaseHolder(ctx); return h != "" && h != leader }) {
		t.Fatal("manager-b never took over")
	}
	takeover := time.Since(killed)
	fleet.expectExactWorld(t, ctx)
	t.Logf("FIGURE leader takeover after SIGKILL: %s (lease 4s, retry 0.5s); exact world %s after the kill",
		takeover.Round(10*time.Millisecond), time.Since(killed).Round(100*time.Millisecond))
}
