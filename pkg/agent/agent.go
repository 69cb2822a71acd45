// Package agent is the cluster-profile-agent that runs on every managed
// cluster. Each period it judges the control plane (KEP-4322's
// ControlPlaneHealthy: API server /readyz with etcd, controller-manager and
// scheduler leader Leases) and the nodes (AllNodesHealthy, counts, capacity),
// reports the two conditions on its ManagedClusterAddOn on the hub and the
// node facts as ClusterClaims on the managed cluster, writing only what
// changed and never more often than MinWriteInterval; a node joining,
// leaving or changing its health starts a round at once (watchNodes), and a
// write held back goes out when its budget allows. Setup puts it on a
// controller-runtime manager for the managed cluster: the probe loop and the
// addon lease updater as runnables, its liveness and readiness as checks.
package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// Defaults of Options.
const (
	DefaultPeriod          = 30 * time.Second
	DefaultLeaseStaleAfter = 60 * time.Second
	// DefaultMinWriteInterval is KEP-4322's scalability rule: at most one hub
	// write per 30 s per cluster, however short the period.
	DefaultMinWriteInterval = 30 * time.Second
	// DefaultHubResync bounds how long the agent trusts its memory of its
	// conditions on the hub before reading them again.
	DefaultHubResync = 10 * time.Minute

	// minRoundTimeout keeps a short period from cutting rounds off.
	minRoundTimeout = 10 * time.Second
)

// Options are the agent's settings.
type Options struct {
	// ClusterName is the managed cluster's name, which is also its namespace on the hub.
	ClusterName string
	// AddonNamespace is where the agent runs and keeps its addon lease.
	AddonNamespace string
	// Period between two rounds of probing.
	Period time.Duration
	// LeaseStaleAfter is how old a leader Lease's renewTime may be before its
	// component counts as unhealthy.
	LeaseStaleAfter time.Duration
	// UnhealthyNodeTolerance is how many nodes may be unhealthy while
	// AllNodesHealthy stays True.
	UnhealthyNodeTolerance int
	// MinWriteInterval is the least time between two writes of the hub
	// conditions, and between two writes of the claims (which the klusterlet
	// carries to the hub). Zero means DefaultMinWriteInterval; only tests
	// should set it lower.
	MinWriteInterval time.Duration
	// HubResync is how often the agent reads its conditions on the hub again
	// even when it believes them current, so that conditions another writer
	// dropped come back. Zero means DefaultHubResync.
	HubResync time.Duration
	// Facts is the write budget of the claims (node counts and resource
	// sums), which the mirror applies again to the properties it makes of
	// them. The zero rule publishes every change once MinWriteInterval
	// allows; the conditions are never held by it.
	Facts damping.Rule
}

func (o *Options) complete() error {
	switch {
	case o.ClusterName == "":
		return errors.New("the cluster name must be set")
	case o.AddonNamespace == "":
		return errors.New("the addon namespace must be set")
	case o.Period <= 0:
		return fmt.Errorf("the period must be positive, not %s", o.Period)
	case o.LeaseStaleAfter <= 0:
		return fmt.Errorf("the lease staleness must be positive, not %s", o.LeaseStaleAfter)
	case o.UnhealthyNodeTolerance < 0:
		return fmt.Errorf("the unhealthy node tolerance must not be negative, not %d", o.UnhealthyNodeTolerance)
	}
	if err := o.Facts.Validate(); err != nil {
		return err
	}
	if o.MinWriteInterval <= 0 {
		o.MinWriteInterval = DefaultMinWriteInterval
	}
	if o.HubResync <= 0 {
		o.HubResync = DefaultHubResync
	}
	return nil
}

// Clients are the agent's connections: the managed cluster's API server and
// the hub's, where its identity may only touch its ManagedClusterAddOn status.
type Clients struct {
	Managed kubernetes.Interface
	Claims  clusterclient.ClusterV1alpha1Interface
	// Hub reads and writes the agent's ManagedClusterAddOn status.
	Hub client.Client
}

// Agent probes and reports in a loop. Create it with New.
type Agent struct {
	opts    Options
	managed kubernetes.Interface
	claims  clusterclient.ClusterClaimInterface
	hub     hubReporter
	clock   clock.WithTicker

	// Only the loop touches these.
	hubKnown        []metav1.Condition // the agent's conditions on the hub
	hubKnownValid   bool
	hubReadAt       time.Time
	lastHubWrite    time.Time
	lastClaimsWrite time.Time
	claimsBudget    damping.Budget
	// owner is what the claims are owned by, once read.
	owner *metav1.OwnerReference
	// heldUntil is when the earliest write the last round held back may go
	// out (zero: none held).
	heldUntil time.Time

	// kick asks the loop for a round before the period ends (watchNodes).
	kick chan struct{}

	// Probes and the addon lease read these from other goroutines.
	started        time.Time
	lastRound      atomic.Int64 // UnixNano of the end of the last round
	lastGoodRound  atomic.Int64 // ... of the last round that observed and reported
	firstRound     chan struct{}
	firstRoundOnce sync.Once
}

// New checks the options, fills in defaults and returns an agent.
func New(opts Options, clients Clients, clk clock.WithTicker) (*Agent, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	return &Agent{
		opts:       opts,
		managed:    clients.Managed,
		claims:     clients.Claims.ClusterClaims(),
		hub:        hubReporter{client: clients.Hub, namespace: opts.ClusterName},
		clock:      clk,
		started:    clk.Now(),
		firstRound: make(chan struct{}),
		kick:       make(chan struct{}, 1),
	}, nil
}

// Run probes and reports every period, when a node changes, and when a
// held write may go out, until ctx ends; then it returns nil.
func (a *Agent) Run(ctx context.Context) error {
	ctrl.LoggerFrom(ctx).Info("Starting clusterprofile-agent", "cluster", a.opts.ClusterName, "addonNamespace", a.opts.AddonNamespace,
		"period", a.opts.Period.String(), "minWriteInterval", a.opts.MinWriteInterval.String())
	go a.watchNodes(ctx)
	ticker := a.clock.NewTicker(a.opts.Period)
	defer ticker.Stop()
	for {
		a.heldUntil = time.Time{}
		a.round(ctx)
		if !a.waitForNextRound(ctx, ticker.C()) {
			return nil
		}
	}
}

// waitForNextRound returns when the next round is due: the period ends, a
// write the last round held back may go out, or a node changed (no sooner
// than minKickedRoundGap after the last round, and never later than the
// other two). False when ctx ended.
func (a *Agent) waitForNextRound(ctx context.Context, period <-chan time.Time) bool {
	var held, kicked <-chan time.Time
	if !a.heldUntil.IsZero() {
		timer := a.clock.NewTimer(max(a.heldUntil.Sub(a.clock.Now()), 0))
		defer timer.Stop()
		held = timer.C()
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-period:
			return true
		case <-held:
			return true
		case <-kicked:
			return true
		case <-a.kick:
			gap := minKickedRoundGap - a.clock.Since(time.Unix(0, a.lastRound.Load()))
			if gap <= 0 {
				return true
			}
			if kicked == nil {
				timer := a.clock.NewTimer(gap)
				defer timer.Stop()
				kicked = timer.C()
			}
		}
	}
}

func (a *Agent) round(ctx context.Context) {
	roundCtx, cancel := context.WithTimeout(ctx, a.roundTimeout())
	defer cancel()
	err := a.observeAndReport(roundCtx)
	switch {
	case ctx.Err() != nil: // shutting down
	case errors.Is(err, errNoAnswer):
		ctrl.LoggerFrom(ctx).Error(err, "Reporting nothing while the managed API server does not answer")
	case err != nil:
		ctrl.LoggerFrom(ctx).Error(err, "Round failed; retrying next period")
	}
	a.roundEnded()
}

func (a *Agent) roundEnded() {
	a.lastRound.Store(a.clock.Now().UnixNano())
	a.firstRoundOnce.Do(func() { close(a.firstRound) })
}

func (a *Agent) roundTimeout() time.Duration { return max(a.opts.Period, minRoundTimeout) }

// observeAndReport runs one round: observe the managed cluster, then report. When the
// managed API server does not answer nothing is reported, so the hub sees the
// report age (the addon lease stops) instead of a guess.
func (a *Agent) observeAndReport(ctx context.Context) error {
	obs, now, err := a.observe(ctx)
	if err != nil {
		return err
	}
	err = errors.Join(a.reportClaims(ctx, obs.claims, now), a.reportHub(ctx, obs.conditions, now))
	if err == nil {
		a.lastGoodRound.Store(now.UnixNano())
	}
	return err
}

// observation is one round's judgment of the managed cluster.
type observation struct {
	conditions []metav1.Condition
	claims     map[string]string
}

// observe reads the managed cluster and judges it. The judgment's time is
// taken once everything is read, so a transition is never stamped earlier
// than the state it reports, and a Lease's age is measured from its read.
func (a *Agent) observe(ctx context.Context) (observation, time.Time, error) {
	readyz, err := probeReadyz(ctx, a.managed.Discovery().RESTClient())
	if err != nil {
		return observation{}, time.Time{}, err
	}
	leases, err := a.controlPlaneLeases(ctx)
	if err != nil {
		return observation{}, time.Time{}, err
	}
	nodes, err := a.listNodes(ctx)
	if err != nil {
		return observation{}, time.Time{}, err
	}
	now := a.clock.Now()
	controlPlane := ControlPlaneCondition(readyz, leases, now, a.opts.LeaseStaleAfter)
	allNodes, summary := NodesReport(nodes, a.opts.UnhealthyNodeTolerance)
	return observation{conditions: []metav1.Condition{controlPlane, allNodes}, claims: Claims(summary)}, now, nil
}

// nodePageSize bounds what one list page holds: node statuses carry image
// lists, so a whole large cluster at once would cost the agent tens of MiB.
const nodePageSize = 500

// listNodes lists the nodes page by page, keeping of each only what the
// judgment reads. Kubernetes 1.31 and later serve the pages from the API
// server's watch cache, not from etcd.
func (a *Agent) listNodes(ctx context.Context) ([]corev1.Node, error) {
	var nodes []corev1.Node
	opts := metav1.ListOptions{Limit: nodePageSize}
	for {
		page, err := a.managed.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		for i := range page.Items {
			n := &page.Items[i]
			nodes = append(nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}, Status: corev1.NodeStatus{
				Conditions: n.Status.Conditions, Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable}})
		}
		if page.Continue == "" {
			return nodes, nil
		}
		opts.Continue = page.Continue
	}
}

// controlPlaneLeases reads the leader Leases. A Lease that is missing, or
// that the agent may not read, leaves its component unobserved.
func (a *Agent) controlPlaneLeases(ctx context.Context) (map[string]*coordinationv1.Lease, error) {
	leases := map[string]*coordinationv1.Lease{}
	for _, component := range LeaseComponents {
		lease, err := a.managed.CoordinationV1().Leases(LeaseNamespace).Get(ctx, component, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case apierrors.IsForbidden(err):
			ctrl.LoggerFrom(ctx).V(1).Info("May not read a leader Lease; its component stays unobserved", "lease", LeaseNamespace+"/"+component)
		case err != nil:
			return nil, fmt.Errorf("reading Lease %s/%s: %w", LeaseNamespace, component, err)
		default:
			leases[component] = lease
		}
	}
	return leases, nil
}

// due tells whether a write may go out now, given the last one.
func (a *Agent) due(last, now time.Time) bool {
	return last.IsZero() || now.Sub(last) >= a.opts.MinWriteInterval
}

func (a *Agent) reportClaims(ctx context.Context, want map[string]string, now time.Time) error {
	logger := ctrl.LoggerFrom(ctx)
	existing, err := a.claims.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing ClusterClaims: %w", err)
	}
	plan := PlanClaims(want, existing.Items, a.claimsOwner(ctx))
	if len(plan.Foreign) > 0 {
		logger.V(1).Info("ClusterClaims without the agent's label hold names the agent publishes; left alone", "claims", plan.Foreign)
	}
	if len(plan.Unlisted) > 0 {
		logger.Info("Not writing ClusterClaims outside the agent's list", "claims", plan.Unlisted)
	}
	if plan.Empty() {
		logger.V(4).Info("ClusterClaims up to date")
		return nil
	}
	facts := a.opts.Facts.Decide(agentClaimValues(existing.Items), plan.Writable(want), a.claimsBudget, now)
	// Changed facts go by their budget alone, slack included; a plan that
	// changes no value (an owner reference added, a stale claim removed),
	// or any plan without damping, waits for the floor.
	switch {
	case facts.Change != damping.Unchanged && !facts.Publish:
		logger.V(4).Info("ClusterClaims changed; held back by the facts' write budget", "change", facts.Change.String(), "wait", facts.Wait.String())
		a.holdUntil(now.Add(facts.Wait))
		return nil
	case (facts.Change == damping.Unchanged || a.opts.Facts.MinInterval <= 0) && !a.due(a.lastClaimsWrite, now):
		logger.V(4).Info("ClusterClaims changed; writing after the minimum interval", "lastWrite", a.lastClaimsWrite)
		a.holdUntil(a.lastClaimsWrite.Add(a.opts.MinWriteInterval))
		return nil
	}
	a.lastClaimsWrite = now
	if facts.Change != damping.Unchanged {
		a.claimsBudget = a.opts.Facts.Spend(a.claimsBudget, now)
	}
	return applyClaims(ctx, a.claims, plan)
}

// claimsOwner is the agent's ClusterRole, which its claims are owned by so
// that they go when OCM removes the addon; read until it is found. Without
// it (RBAC of an older release, a ClusterRole not yet applied) the claims
// are written unowned.
func (a *Agent) claimsOwner(ctx context.Context) *metav1.OwnerReference {
	if a.owner != nil {
		return a.owner
	}
	role, err := a.managed.RbacV1().ClusterRoles().Get(ctx, agentapi.ClusterRole, metav1.GetOptions{})
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Writing ClusterClaims without an owner: the agent's ClusterRole cannot be read; they stay when the addon is removed",
			"clusterRole", agentapi.ClusterRole, "reason", err.Error())
		return nil
	}
	a.owner = ClaimsOwner(role)
	return a.owner
}

func (a *Agent) reportHub(ctx context.Context, want []metav1.Condition, now time.Time) error {
	logger := ctrl.LoggerFrom(ctx)
	if !a.hubKnownValid || now.Sub(a.hubReadAt) >= a.opts.HubResync {
		current, err := a.hub.read(ctx)
		if err != nil {
			a.hubKnownValid = false
			return err
		}
		a.hubKnown, a.hubKnownValid, a.hubReadAt = current, true, now
	}
	planned, changed := PlanConditions(a.hubKnown, want, now)
	switch {
	case !changed:
		logger.V(4).Info("Hub conditions up to date")
		return nil
	case !a.due(a.lastHubWrite, now):
		logger.V(4).Info("Hub conditions changed; writing after the minimum interval", "lastWrite", a.lastHubWrite)
		a.holdUntil(a.lastHubWrite.Add(a.opts.MinWriteInterval))
		return nil
	}
	// A failed attempt counts too: an unreachable hub is not hammered.
	a.lastHubWrite = now
	stored, err := a.hub.apply(ctx, planned)
	if err != nil {
		a.hubKnownValid = false
		return err
	}
	a.hubKnown = stored
	logger.V(2).Info("Reported conditions to the hub", "managedClusterAddOn", a.hub.key(), "conditions", summarize(planned))
	return nil
}

func summarize(conditions []metav1.Condition) map[string]string {
	out := map[string]string{}
	for _, c := range conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

// FirstRoundDone is closed once the first round has ended.
func (a *Agent) FirstRoundDone() <-chan struct{} { return a.firstRound }

// healthWindow is how long the agent counts as alive or reporting after its
// last (good) round: a few periods and a slow round.
func (a *Agent) healthWindow() time.Duration { return 3*a.opts.Period + a.roundTimeout() }

// Reporting tells whether the last round that observed the managed cluster
// and delivered its report (or had nothing new to deliver) is recent. The
// addon lease is renewed only then, so the klusterlet reports the addon
// unavailable — and the hub treats the report as stale — when the agent can
// no longer observe or report.
func (a *Agent) Reporting() bool {
	last := a.lastGoodRound.Load()
	return last != 0 && a.clock.Since(time.Unix(0, last)) <= a.healthWindow()
}

// Alive is the liveness check: rounds keep ending.
func (a *Agent) Alive(*http.Request) error {
	last := a.started
	if ns := a.lastRound.Load(); ns != 0 {
		last = time.Unix(0, ns)
	}
	if since := a.clock.Since(last); since > a.healthWindow() {
		return fmt.Errorf("no round has ended for %s", since.Round(time.Second))
	}
	return nil
}

// Ready is the readiness check: the first round has ended.
func (a *Agent) Ready(*http.Request) error {
	select {
	case <-a.firstRound:
		return nil
	default:
		return errors.New("the first round has not ended yet")
	}
}
