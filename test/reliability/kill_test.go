package reliability_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGKILL in the middle of convergence, five times in a row, with the
// mirror, the cluster-proxy and direct entries and the token syncer all
// writing, and another writer adding its own entry and property to the
// profiles published by the second kill; each restart picks up where the
// world is, and the last one ends in the exact world: every profile
// complete with both entries once each, the other writer's share kept.
func TestKilledFiveTimesDuringConvergence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "kill", 40)
	total := len(fleet.want().Profiles)
	args := []string{bundleGates, "--kube-api-qps=20", "--kube-api-burst=20"}
	var lastKill time.Time
	for round := 1; round <= 5; round++ {
		before := fleet.published(ctx)
		m := startManagerProcess(t, "manager", args...)
		// Kill once this run has published something more (or after 3 s).
		waitFor(ctx, 3*time.Second, func() bool { return fleet.published(ctx) > before })
		m.kill()
		lastKill = time.Now()
		t.Logf("round %d: killed with %d of %d profiles published", round, fleet.published(ctx), total)
		if round == 2 {
			t.Logf("another writer added its entry and property to %d profiles", fleet.addForeignEntries(ctx, t))
		}
	}
	startManagerProcess(t, "manager", args...)
	fleet.expectExactWorld(t, ctx)
	t.Logf("FIGURE convergence after the 5th SIGKILL: exact world %s after the kill (restart included)",
		time.Since(lastKill).Round(100*time.Millisecond))
}

// SIGTERM in the middle of convergence: the manager finishes its in-flight
// writes within --graceful-shutdown-timeout and exits 0; a restart ends in
// the exact world.
func TestSIGTERMDuringConvergence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "term", 30)
	args := []string{bundleGates, "--kube-api-qps=20", "--kube-api-burst=20", "--graceful-shutdown-timeout=10s"}
	m := startManagerProcess(t, "manager", args...)
	if !waitFor(ctx, 30*time.Second, func() bool { return fleet.published(ctx) >= 5 }) {
		t.Fatal("the manager published nothing")
	}
	m.signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the manager did not exit within twice its graceful shutdown timeout")
	}
	if m.err != nil {
		t.Errorf("the manager exited with %v after SIGTERM, want exit code 0", m.err)
	}
	expectNothingHalfWritten(ctx, t, fleet)
	startManagerProcess(t, "manager-2", args...)
	fleet.expectExactWorld(t, ctx)
}

// expectNothingHalfWritten checks what a stopped manager left: every
// profile there has its labels and spec whole (one write makes them), every
// copy its token; only what was not reached yet may be missing.
func expectNothingHalfWritten(ctx context.Context, t *testing.T, fleet testFleet) {
	t.Helper()
	got, err := fleet.observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := fleet.want()
	for key, profile := range got.Profiles {
		wantFields, gotFields := strings.Fields(want.Profiles[key]), strings.Fields(profile)
		if len(wantFields) < 2 || len(gotFields) < 2 || wantFields[0] != gotFields[0] || wantFields[1] != gotFields[1] {
			t.Errorf("profile %s left as %q, want its metadata as in %q", key, profile, want.Profiles[key])
		}
	}
	for key, token := range got.Copies {
		if token != want.Copies[key] {
			t.Errorf("copy %s left with token %q, want %q", key, token, want.Copies[key])
		}
	}
	t.Logf("left by SIGTERM: %d of %d profiles, %d of %d copies, each whole", len(got.Profiles), len(want.Profiles), len(got.Copies), len(want.Copies))
}
