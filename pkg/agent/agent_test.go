package agent

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// unusedClients satisfies New for tests that send no request.
func unusedClients(t *testing.T) Clients {
	t.Helper()
	managed := &rest.Config{Host: "https://managed.invalid"}
	managedHTTP, err := rest.HTTPClientFor(managed)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := newClients(managed, managedHTTP, &rest.Config{Host: "https://hub.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	return clients
}

func validOptions() Options {
	return Options{ClusterName: "c1", AddonNamespace: "agent-ns", Period: 30 * time.Second, LeaseStaleAfter: time.Minute}
}

func TestNewChecksOptions(t *testing.T) {
	cases := map[string]struct {
		change  func(*Options)
		wantErr string
		want    func(*Options)
	}{
		"defaults fill the write floor and the resync": {
			want: func(o *Options) { o.MinWriteInterval, o.HubResync = DefaultMinWriteInterval, DefaultHubResync },
		},
		"a lower floor is kept, for tests": {
			change: func(o *Options) { o.MinWriteInterval = time.Millisecond },
			want:   func(o *Options) { o.MinWriteInterval, o.HubResync = time.Millisecond, DefaultHubResync },
		},
		"cluster name":       {change: func(o *Options) { o.ClusterName = "" }, wantErr: "the cluster name must be set"},
		"addon namespace":    {change: func(o *Options) { o.AddonNamespace = "" }, wantErr: "the addon namespace must be set"},
		"period":             {change: func(o *Options) { o.Period = 0 }, wantErr: "the period must be positive, not 0s"},
		"lease staleness":    {change: func(o *Options) { o.LeaseStaleAfter = -time.Second }, wantErr: "the lease staleness must be positive, not -1s"},
		"negative tolerance": {change: func(o *Options) { o.UnhealthyNodeTolerance = -1 }, wantErr: "the unhealthy node tolerance must not be negative, not -1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := validOptions()
			if tc.change != nil {
				tc.change(&opts)
			}
			a, err := New(opts, unusedClients(t), clocktesting.NewFakeClock(testNow))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("New error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			want := opts
			tc.want(&want)
			if diff := cmp.Diff(want, a.opts); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// probe answers a request for path ("/" or "/<check>") from checks, as the
// manager's /healthz or /readyz endpoint does.
func probe(t *testing.T, checks map[string]healthz.Checker, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	handler := &healthz.Handler{Checks: checks}
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

func TestProbesAndReporting(t *testing.T) {
	clk := clocktesting.NewFakeClock(testNow)
	a, err := New(validOptions(), unusedClients(t), clk)
	if err != nil {
		t.Fatal(err)
	}
	healthzChecks, readyzChecks := a.livenessChecks(), a.readinessChecks()
	window := a.healthWindow() // 3 periods and a round: 2m0s

	// Starting: alive, not ready, not reporting.
	if code := probe(t, healthzChecks, "/"); code != http.StatusOK {
		t.Errorf("/healthz at start = %d, want 200", code)
	}
	if code := probe(t, readyzChecks, "/"); code == http.StatusOK {
		t.Errorf("/readyz before the first round = 200, want a failure")
	}
	if a.Reporting() {
		t.Errorf("Reporting before any round = true")
	}

	// A good round.
	a.lastGoodRound.Store(clk.Now().UnixNano())
	a.roundEnded()
	for path, code := range map[string]int{
		"/healthz": probe(t, healthzChecks, "/"), "/healthz/rounds": probe(t, healthzChecks, "/rounds"),
		"/readyz": probe(t, readyzChecks, "/"), "/readyz/first-round": probe(t, readyzChecks, "/first-round"),
	} {
		if code != http.StatusOK {
			t.Errorf("%s after a round = %d, want 200", path, code)
		}
	}
	if !a.Reporting() {
		t.Errorf("Reporting after a good round = false")
	}

	// Rounds go on but report nothing (managed API server unreachable).
	clk.Step(window)
	a.roundEnded()
	clk.Step(time.Second)
	if a.Reporting() {
		t.Errorf("Reporting %s after the last good round = true", window+time.Second)
	}
	if code := probe(t, healthzChecks, "/"); code != http.StatusOK {
		t.Errorf("/healthz while rounds go on = %d, want 200", code)
	}

	// Rounds stop ending.
	clk.Step(window)
	if code := probe(t, healthzChecks, "/"); code == http.StatusOK {
		t.Errorf("/healthz with no round for %s = 200, want a failure", window+time.Second)
	}
}
