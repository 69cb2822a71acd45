package capability

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestRetryUntilDoneKeepsRetryingAtTheCap: a teardown that fails for longer
// than the backoff takes to reach its cap is still retried, at the cap, until
// it succeeds. wait.ExponentialBackoffWithContext stops once the cap is
// reached, which left a teardown undone after about nine attempts.
func TestRetryUntilDoneKeepsRetryingAtTheCap(t *testing.T) {
	backoff := wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: DefaultBackoff.Steps, Cap: 4 * time.Millisecond}
	const failures = 20
	calls := 0
	var reported []int
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	RetryUntilDone(ctx, backoff, func(context.Context) error {
		calls++
		if calls <= failures {
			return errors.New("the API server refuses")
		}
		return nil
	}, func(_ error, attempt int) { reported = append(reported, attempt) })

	want := make([]int, failures)
	for i := range want {
		want[i] = i + 1
	}
	if diff := cmp.Diff(struct {
		Calls    int
		Reported []int
	}{failures + 1, want},
		struct {
			Calls    int
			Reported []int
		}{calls, reported}); diff != "" {
		t.Errorf("retries (-want +got):\n%s", diff)
	}
}

// TestRetryUntilDoneStopsWithItsContext: a manager that stops ends the
// retries of a teardown that cannot succeed.
func TestRetryUntilDoneStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	RetryUntilDone(ctx, wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: DefaultBackoff.Steps},
		func(context.Context) error { calls++; return errors.New("refused") },
		func(_ error, attempt int) {
			if attempt == 3 {
				cancel()
			}
		})
	if calls != 3 {
		t.Errorf("calls = %d, want 3: no call after the context ended", calls)
	}
}
