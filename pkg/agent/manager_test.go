package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"open-cluster-management.io/addon-framework/pkg/lease"
)

// startRecorder is a lease.LeaseUpdater that records that it started and
// then, like the real one, renews until its context ends.
type startRecorder struct{ started chan struct{} }

func (r startRecorder) Start(ctx context.Context) {
	close(r.started)
	<-ctx.Done()
}

func (r startRecorder) WithHubLeaseConfig(*rest.Config, string) lease.LeaseUpdater { return r }

func TestAddonLeaseStartsAfterTheFirstRound(t *testing.T) {
	a, err := New(validOptions(), unusedClients(t), clocktesting.NewFakeClock(testNow))
	if err != nil {
		t.Fatal(err)
	}
	updater := startRecorder{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- a.renewAddonLease(updater)(ctx) }()

	select {
	case <-updater.started:
		t.Fatal("the lease updater started before the first round ended")
	case <-time.After(50 * time.Millisecond):
	}
	a.roundEnded()
	select {
	case <-updater.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the lease updater did not start after the first round")
	}
	cancel()
	select {
	case err := <-returned:
		if err != nil {
			t.Errorf("the lease runnable returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lease runnable did not return when its context ended")
	}
}

func TestAddonLeaseNeverStartsWhenStoppedFirst(t *testing.T) {
	a, err := New(validOptions(), unusedClients(t), clocktesting.NewFakeClock(testNow))
	if err != nil {
		t.Fatal(err)
	}
	updater := startRecorder{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.renewAddonLease(updater)(ctx); err != nil {
		t.Errorf("the lease runnable returned %v, want nil", err)
	}
	select {
	case <-updater.started:
		t.Error("the lease updater started although the agent stopped before its first round")
	default:
	}
}

func TestManagerOptions(t *testing.T) {
	opts := ManagerOptions(":8081")
	type settings struct {
		LeaderElection          bool
		MetricsBindAddress      string
		HealthProbeBindAddress  string
		GracefulShutdownTimeout *time.Duration
	}
	got := settings{opts.LeaderElection, opts.Metrics.BindAddress, opts.HealthProbeBindAddress, opts.GracefulShutdownTimeout}
	want := settings{MetricsBindAddress: "0", HealthProbeBindAddress: ":8081", GracefulShutdownTimeout: ptr.To(10 * time.Second)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manager settings (-want +got):\n%s", diff)
	}
}
