// Package capability is how clusterprofile-manager starts each of its
// capabilities (the mirror, the access providers, the credential syncer,
// the agent addon), all in one shape:
//
//   - a capability whose gate is on is set up once every API it requires is
//     served: right away when they are, else as soon as they appear (it
//     says once what it waits for; it never stops the manager);
//   - the shared indexes it uses are registered once, before the first
//     capability that uses them;
//   - a capability whose gate is off tears down what it published, at start,
//     retrying with backoff until that succeeds; a teardown that needs
//     rights beyond the capability's own runs only when the operator asks
//     for cleanup.
package capability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
)

// Gates tells which feature gates are on. The runner hands its gates to
// every Setup, so what a capability does while another one is on (the
// mirror folding the agent's reports, the syncer recording the entries of
// the access providers that run) follows the gates the runner reads, and
// nothing else reads them.
type Gates interface {
	Enabled(featuregate.Feature) bool
}

// Capability is one thing the manager can do, behind one feature gate.
type Capability struct {
	// Name names it in logs, e.g. "mirror".
	Name string
	// Gate turns it on.
	Gate featuregate.Feature
	// Requires are the APIs it cannot work without.
	Requires []schema.GroupVersionKind
	// RequiresIf are the APIs it also needs while another gate is on.
	RequiresIf map[featuregate.Feature][]schema.GroupVersionKind
	// Indexes are the shared field indexes its Setup relies on.
	Indexes []fieldindex.Index
	// Setup registers its caches, controllers and runnables with the
	// manager, given the runner's gates.
	Setup func(ctx context.Context, mgr ctrl.Manager, gates Gates) error
	// Teardown removes what it published while its gate is off; nil when it
	// publishes nothing of its own. It is retried until it succeeds, so it
	// must be idempotent, and it should page through large lists.
	Teardown func(ctx context.Context, mgr ctrl.Manager) error
	// TeardownIsOptIn marks a teardown that needs rights beyond the
	// capability's own (deleting profiles, listing every Secret): it runs
	// only when the operator asked for cleanup (--cleanup-disabled-features).
	TeardownIsOptIn bool
}

// Runner starts capabilities on one manager.
type Runner struct {
	Manager ctrl.Manager
	Gates   featuregate.FeatureGate
	// Cleanup is --cleanup-disabled-features.
	Cleanup bool
	// PollInterval is how often a waiting capability looks for its APIs.
	PollInterval time.Duration
	// Backoff paces teardown retries.
	Backoff wait.Backoff

	mu      sync.Mutex // guards indexes: waiting capabilities set up concurrently
	indexes map[string]bool
}

// DefaultBackoff retries a teardown after 1 s, doubling up to 5 minutes.
var DefaultBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: 5 * time.Minute}

// Start sets up or tears down every capability, as its gate says.
func (r *Runner) Start(ctx context.Context, capabilities []Capability) error {
	if r.PollInterval == 0 {
		r.PollInterval = 10 * time.Second
	}
	if r.Backoff.Duration == 0 {
		r.Backoff = DefaultBackoff
	}
	var errs []error
	for _, c := range capabilities {
		if r.Gates.Enabled(c.Gate) {
			errs = append(errs, r.start(ctx, c))
			continue
		}
		errs = append(errs, r.tearDown(c))
	}
	return errors.Join(errs...)
}

// start sets c up now if its APIs are served, else once they are.
func (r *Runner) start(ctx context.Context, c Capability) error {
	log := ctrl.Log.WithName("capability").WithValues("capability", c.Name, "gate", c.Gate)
	requires := r.requires(c)
	missing := r.unserved(requires)
	metrics.SetCapabilityWaiting(c.Name, len(missing) > 0)
	if len(missing) == 0 {
		return r.setup(ctx, c)
	}
	log.Info("Waiting for required APIs; the capability starts as soon as they are served", "missing", strings.Join(missing, ", "))
	return r.Manager.Add(manager.RunnableFunc(func(ctx context.Context) error {
		err := wait.PollUntilContextCancel(ctx, r.PollInterval, false, func(context.Context) (bool, error) {
			return len(r.unserved(requires)) == 0, nil
		})
		if err != nil {
			return nil // the manager is stopping
		}
		log.Info("Required APIs are served; starting the capability")
		metrics.SetCapabilityWaiting(c.Name, false)
		return r.setup(ctx, c)
	}))
}

func (r *Runner) setup(ctx context.Context, c Capability) error {
	if err := r.registerIndexes(ctx, c); err != nil {
		return err
	}
	if err := c.Setup(ctx, r.Manager, r.Gates); err != nil {
		return fmt.Errorf("setting up the %s: %w", c.Name, err)
	}
	return nil
}

// registerIndexes registers the shared indexes c uses that no capability
// registered before.
func (r *Runner) registerIndexes(ctx context.Context, c Capability) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, index := range c.Indexes {
		if r.indexes[index.Name] {
			continue
		}
		if err := index.Setup(ctx, r.Manager.GetCache()); err != nil {
			return fmt.Errorf("registering the %s index for the %s: %w", index.Name, c.Name, err)
		}
		if r.indexes == nil {
			r.indexes = map[string]bool{}
		}
		r.indexes[index.Name] = true
	}
	return nil
}

// tearDown runs c's teardown once, as the leader, retrying until it
// succeeds.
func (r *Runner) tearDown(c Capability) error {
	log := ctrl.Log.WithName("capability").WithValues("capability", c.Name, "gate", c.Gate)
	switch {
	case c.Teardown == nil:
		return nil
	case c.TeardownIsOptIn && !r.Cleanup:
		log.V(1).Info("Gate is off; leaving what it published (cleanup not asked for)")
		return nil
	}
	return r.Manager.Add(manager.RunnableFunc(func(ctx context.Context) error {
		RetryUntilDone(ctx, r.Backoff, func(ctx context.Context) error { return c.Teardown(ctx, r.Manager) },
			func(err error, attempt int) {
				log.Error(err, "Removing what the capability published failed; retrying", "attempt", attempt)
			})
		return nil // the manager is stopping, or the teardown is done
	}))
}

// RetryUntilDone calls attempt until it returns nil or ctx ends, waiting as
// backoff says between calls (at its cap once reached), and reports every
// failure to failed. Not wait.ExponentialBackoffWithContext: it gives up
// once the backoff reaches its cap, which would leave a teardown undone
// (token copies behind) after an API outage of a few minutes.
func RetryUntilDone(ctx context.Context, backoff wait.Backoff, attempt func(context.Context) error, failed func(err error, attempt int)) {
	n := 0
	_ = backoff.DelayFunc().Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		n++
		err := attempt(ctx)
		if err != nil {
			failed(err, n)
		}
		return err == nil, nil
	})
}

// requires are the APIs c needs with the gates that are on.
func (r *Runner) requires(c Capability) []schema.GroupVersionKind {
	requires := slices.Clone(c.Requires)
	for gate, apis := range c.RequiresIf {
		if r.Gates.Enabled(gate) {
			requires = append(requires, apis...)
		}
	}
	return requires
}

// unserved names the required APIs the API server does not serve.
func (r *Runner) unserved(required []schema.GroupVersionKind) []string {
	var missing []string
	for _, gvk := range required {
		if !APIServed(r.Manager.GetRESTMapper(), gvk) {
			missing = append(missing, gvk.Kind+"."+gvk.GroupVersion().String())
		}
	}
	return missing
}

// APIServed tells whether the API server serves gvk (not to be confused with
// membership's serving: a namespace publishing a cluster).
func APIServed(mapper meta.RESTMapper, gvk schema.GroupVersionKind) bool {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}
