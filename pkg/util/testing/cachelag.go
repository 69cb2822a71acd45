package testing

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
)

// ExpectACreateWaitsForItsCache runs reconcile, whose cache never shows what
// it creates, through cachelag's three steps: it creates; a second later it
// sends nothing and comes back when cachelag.Patience is over; after that it
// creates again. creates counts the creates sent so far; reported the Events
// sent, of which there must be none.
func ExpectACreateWaitsForItsCache(t *testing.T, clock *clocktesting.FakePassiveClock,
	reconcile func() (reconcile.Result, error), creates func() int, reported func() []string) {
	t.Helper()
	steps := []struct {
		name        string
		after       time.Duration
		wantRequeue time.Duration
		wantCreates int
	}{
		{"created", 0, 0, 1},
		{"the cache does not show it yet: nothing sent", time.Second, cachelag.Patience - time.Second, 1},
		{"still blind after Patience: created again", cachelag.Patience, 0, 2},
	}
	for _, step := range steps {
		clock.SetTime(clock.Now().Add(step.after))
		result, err := reconcile()
		if err != nil {
			t.Fatalf("%s: Reconcile: %v", step.name, err)
		}
		if result.RequeueAfter != step.wantRequeue || creates() != step.wantCreates {
			t.Errorf("%s: RequeueAfter %s and %d creates, want %s and %d", step.name, result.RequeueAfter, creates(), step.wantRequeue, step.wantCreates)
		}
		if got := reported(); len(got) > 0 {
			t.Errorf("%s: reported %v", step.name, got)
		}
	}
}
