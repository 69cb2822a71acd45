package framework

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/hubmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// RequestCounter counts the requests a client sends, by method, for one
// resource (matched on the URL path).
type RequestCounter struct {
	resource string
	// namespacePrefix, when set, limits counting to namespaces starting with it.
	namespacePrefix string
	mu              sync.Mutex
	byMethod        map[string]int
	requests        []string
}

// NewRequestCounter counts requests whose path names resource (e.g.
// "clusterprofiles"), optionally only in namespaces starting with
// namespacePrefix, so a test counts only its own objects.
func NewRequestCounter(resource, namespacePrefix string) *RequestCounter {
	return &RequestCounter{resource: resource, namespacePrefix: namespacePrefix, byMethod: map[string]int{}}
}

func (c *RequestCounter) counts(path string) bool {
	return strings.Contains(path, "/"+c.resource) &&
		(c.namespacePrefix == "" || strings.Contains(path, "/namespaces/"+c.namespacePrefix))
}

// Wrap installs the counter on a rest.Config.
func (c *RequestCounter) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if c.counts(req.URL.Path) {
				c.mu.Lock()
				c.byMethod[req.Method]++
				c.requests = append(c.requests, req.Method+" "+req.URL.RequestURI())
				c.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// Writes is the number of POST, PUT, PATCH and DELETE requests so far.
func (c *RequestCounter) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byMethod[http.MethodPost] + c.byMethod[http.MethodPut] + c.byMethod[http.MethodPatch] + c.byMethod[http.MethodDelete]
}

// Settled waits for the counted writes to stop (none for half a second)
// and returns their count.
func (c *RequestCounter) Settled() int {
	for last := -1; ; {
		time.Sleep(500 * time.Millisecond)
		if n := c.Writes(); n == last {
			return n
		} else {
			last = n
		}
	}
}

// Requests returns every counted request as "METHOD path?query".
func (c *RequestCounter) Requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.requests...)
}

// ByMethod returns a copy of the counts.
func (c *RequestCounter) ByMethod() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.byMethod))
	for k, v := range c.byMethod {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// ManagerOptions change how StartManager runs clusterprofile-manager.
type ManagerOptions struct {
	// Gates are feature gate settings; ClusterProfile defaults to on.
	Gates map[string]bool
	// ClusterManagerName defaults to open-cluster-management.
	ClusterManagerName string
	CleanupDisabled    bool
	// Counter, when set, counts the manager's ClusterProfile requests.
	Counter *RequestCounter
	// ProxyEndpoint overrides where consumers reach cluster-proxy's user server.
	ProxyEndpoint accessprovider.Endpoint
	// MultiKueue configures the MultiKueue integration.
	MultiKueue multikueue.Options
	// ArgoCD configures the Argo CD integration.
	ArgoCD argocd.Settings
	// UnscopedTokens is where unscoped tokens go (everywhere when empty).
	UnscopedTokens credsync.UnscopedTokens
	// Facts is the write budget of drifting facts (off when zero).
	Facts damping.Rule
	// Coexistence says where upstream twins may be installed; zero: the
	// chart's default (open-cluster-management-addon, decoys reported).
	Coexistence *coexistence.Trust
	// Namespace is the manager's own namespace (its id records); zero:
	// the mirror's default.
	Namespace string
}

// StartManager runs clusterprofile-manager, wired exactly as the binary, until
// the test ends (or the returned stop function is called).
func StartManager(t testing.TB, env *Env, opts ManagerOptions) (stop func()) {
	t.Helper()
	gates := features.NewGate()
	settings := map[string]bool{string(features.ClusterProfile): true}
	for k, v := range opts.Gates {
		settings[k] = v
	}
	if err := gates.SetFromMap(settings); err != nil {
		t.Fatalf("setting feature gates: %v", err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling in tests
	if opts.Counter != nil {
		cfg = opts.Counter.Wrap(cfg)
	}
	trust := coexistence.Trust{Namespaces: []string{coexistence.DefaultUpstreamNamespace}, ReportDecoys: true}
	if opts.Coexistence != nil {
		trust = *opts.Coexistence
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := hubmanager.New(ctx, cfg, hubmanager.Options{
		Coexistence:             trust,
		LeaderElectionNamespace: opts.Namespace,
		FeatureGates:            gates,
		ClusterManagerName:      opts.ClusterManagerName,
		MetricsAddr:             "0",
		ProbeAddr:               "0",
		MirrorWorkers:           4,
		CleanupDisabled:         opts.CleanupDisabled,
		ProxyEndpoint:           opts.ProxyEndpoint,
		MultiKueue:              opts.MultiKueue,
		ArgoCD:                  opts.ArgoCD,
		UnscopedTokens:          opts.UnscopedTokens,
		Facts:                   opts.Facts,
		GracefulShutdownTimeout: 5 * time.Second,
		// Several managers run in one test binary, one after another.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		cancel()
		t.Fatalf("building manager: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		t.Fatalf("manager caches did not sync")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager stopped with error: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
