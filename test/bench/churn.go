package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cpmetrics "open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// churnWorkers send the churn's status updates, each for its share of the
// clusters in the order they are due.
const churnWorkers = 64

// lateNote, in milliseconds, is how late an event may be sent or wait in
// the mirror's queue on average before the report says the run fell behind.
const lateNote = 1000

// churnMode is one manager the churn runs against.
type churnMode struct {
	name string
	rule damping.Rule
}

// churnModes: the facts' default write budget on the churn's compressed
// clock, then no budget.
func churnModes() []churnMode {
	return []churnMode{{"damped", scaledRule(churnCompression)}, {"undamped", damping.Off()}}
}

// churnCluster is a ManagedCluster the churn drives: as the API server last
// returned it, and its status as the phase found it.
type churnCluster struct {
	live  *clusterv1.ManagedCluster
	found clusterv1.ManagedClusterStatus
}

// churn runs the same seeded schedule of scale events and condition flaps
// against a manager with the facts' write budget and one without, and
// counts the profile writes each sent. It leaves the clusters as it found
// them and a manager with the run's own flags for the phases that follow.
func (b *bench) churn(ctx context.Context) error {
	clusters, err := b.churnClusters(ctx)
	if err != nil {
		return err
	}
	p := defaultChurnParams(b.cfg.churn)
	schedule := churnSchedule(b.cfg.churnSeed, len(clusters), p)
	res := &churnResult{
		Seconds: p.Duration.Seconds(), NoiseSeconds: p.NoiseWindow.Seconds(), Compression: churnCompression,
		Seed: b.cfg.churnSeed, Clusters: len(clusters), Profiles: len(clusters) * len(b.world.namespaces),
		BudgetPerHour: kepWritesPerHour, Scheduled: countEvents(schedule, 0, p.Duration),
	}
	b.res.Churn = res
	b.progress.logf("churn: %s of churn (%s of a fleet's time), %s scheduled",
		formatDuration(p.Duration), p.Duration*churnCompression, res.Scheduled)
	for _, mode := range churnModes() {
		run, err := b.churnRun(ctx, mode, clusters, schedule, p)
		if err != nil {
			return fmt.Errorf("%s: %w", mode.name, err)
		}
		res.Runs = append(res.Runs, run)
	}
	_, err = b.restartOn(ctx, clusters, "after-churn")
	return err
}

// churnClusters reads the clusters the churn drives (the first
// -churn-clusters of the world) as they are now.
func (b *bench) churnClusters(ctx context.Context) ([]*churnCluster, error) {
	list := &clusterv1.ManagedClusterList{}
	if err := b.setup.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing ManagedClusters: %w", err)
	}
	byName := map[string]*clusterv1.ManagedCluster{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	out := make([]*churnCluster, b.cfg.churnClusters)
	for i, c := range b.world.clusters[:b.cfg.churnClusters] {
		live, ok := byName[c.Name]
		if !ok {
			return nil, fmt.Errorf("ManagedCluster %s is gone", c.Name)
		}
		out[i] = &churnCluster{live: live, found: *live.Status.DeepCopy()}
	}
	return out, nil
}

// restartOn stops the manager, puts the clusters back as the phase found
// them and starts a manager with the run's flags and extra ones, waiting
// until it has resynced.
func (b *bench) restartOn(ctx context.Context, clusters []*churnCluster, name string, extraFlags ...string) (*managerProcess, error) {
	if b.manager != nil {
		if err := b.stopManager(); err != nil {
			return nil, err
		}
	}
	err := forEach(ctx, setupWorkers, len(clusters), func(ctx context.Context, i int) error {
		c := clusters[i]
		if equality.Semantic.DeepEqual(c.live.Status, c.found) {
			return nil
		}
		return b.patchStatus(ctx, c.live, func(mc *clusterv1.ManagedCluster) { mc.Status = *c.found.DeepCopy() })
	})
	if err != nil {
		return nil, fmt.Errorf("restoring the clusters: %w", err)
	}
	m, err := b.startManager(name, extraFlags...)
	if err != nil {
		return nil, err
	}
	if _, _, err := b.waitQuiet(ctx, m, len(b.world.clusters)); err != nil {
		return nil, err
	}
	return m, nil
}

// patchStatus changes a cluster's status with a merge patch and keeps what
// the API server returned.
func (b *bench) patchStatus(ctx context.Context, c *clusterv1.ManagedCluster, change func(*clusterv1.ManagedCluster)) error {
	before := c.DeepCopy()
	change(c)
	if err := b.setup.Status().Patch(ctx, c, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("patching status of ManagedCluster %s: %w", c.Name, err)
	}
	return nil
}

// churnRun measures one manager under the schedule: every cluster's first
// publication since the start, the noise-only window, the whole schedule.
func (b *bench) churnRun(ctx context.Context, mode churnMode, clusters []*churnCluster, schedule []clusterSchedule, p churnParams) (churnRun, error) {
	run := churnRun{Mode: mode.name, Damped: mode.rule.MinInterval > 0, ManagerFlags: ruleFlags(mode.rule)}
	m, err := b.restartOn(ctx, clusters, "churn-"+mode.name, run.ManagerFlags...)
	if err != nil {
		return run, err
	}
	started, err := b.startChurn(ctx, m, clusters, schedule)
	if err != nil {
		return run, err
	}
	run.FirstPublications = started.first
	noise, err := b.churnWindow(ctx, m, clusters, schedule, window{to: p.NoiseWindow}, started.after)
	if err != nil {
		return run, err
	}
	b.progress.logf("churn %s: noise-only window: sent %s; %s", mode.name, noise.sent.sent, noise.counts)
	// Changes the budget holds when the schedule ends go out within one
	// minimum interval: they are the schedule's writes too.
	rest, err := b.churnWindow(ctx, m, clusters, schedule,
		window{from: p.NoiseWindow, to: p.Duration, tail: mode.rule.MinInterval}, noise.after)
	if err != nil {
		return run, err
	}
	run.Noise = noise.counts
	run.Churn = countsBetween(started.after, rest.after)
	run.Churn.Sent, run.Churn.Dropped = noise.sent.sent.plus(rest.sent.sent), noise.sent.dropped.plus(rest.sent.dropped)
	run.Late = summarize(append(noise.sent.late, rest.sent.late...))
	run.QueueAtEnd = rest.queueAtEnd
	run.SettledSeconds = max(rest.quietAt.Sub(rest.sent.lastAt), 0).Seconds()
	run.TailSeconds = mode.rule.MinInterval.Seconds()
	run.WritesPerProfileHour = writesPerProfileHour(run.Churn.StatusWrites, len(clusters)*len(b.world.namespaces), p.Duration, churnCompression)
	if changed := run.Churn.Sent.total() * len(b.world.namespaces); changed > 0 {
		run.WritesPerChange = float64(run.Churn.StatusWrites) / float64(changed)
	}
	run.Notes = churnNotes(run)
	b.progress.logf("churn %s: sent %s; %s; %.1f writes per profile per hour of the fleet's time",
		mode.name, run.Churn.Sent, run.Churn, run.WritesPerProfileHour)
	return run, nil
}

// churnNotes say what made a run lighter than its schedule asked for: the
// benchmark sending late, or the manager coalescing a backlog.
func churnNotes(r churnRun) []string {
	var notes []string
	if dropped := r.Churn.Dropped.total(); dropped > 0 || r.Late.P99Millis > lateNote {
		notes = append(notes, fmt.Sprintf("the benchmark fell behind its schedule (%d events dropped, p99 %s late): the churn was lighter than asked; try fewer clusters",
			dropped, formatDuration(time.Duration(r.Late.P99Millis)*time.Millisecond)))
	}
	if r.Churn.MeanQueueWaitMillis > lateNote {
		notes = append(notes, fmt.Sprintf("changes waited %s on average in the mirror's queue: the manager fell behind and wrote several at once",
			formatDuration(time.Duration(r.Churn.MeanQueueWaitMillis)*time.Millisecond)))
	}
	if !r.Damped && r.WritesPerChange < 0.95 {
		notes = append(notes, fmt.Sprintf("without the budget the manager wrote %.2f of the changes: its rate is a lower bound of what the churn asks for", r.WritesPerChange))
	}
	return notes
}

// startState is the churn's start state, published.
type startState struct {
	first int       // status writes it took
	after metricSet // the manager's metrics once it was quiet
}

// startChurn sets every cluster to its schedule's start (its base node
// count, up) and waits until the manager has published it. A new manager
// remembers no publication, so each cluster's first change goes out at
// once whatever the budget; after this, every cluster has one.
func (b *bench) startChurn(ctx context.Context, m *managerProcess, clusters []*churnCluster, schedule []clusterSchedule) (startState, error) {
	before, err := m.scrape(ctx)
	if err != nil {
		return startState{}, err
	}
	err = forEach(ctx, setupWorkers, len(clusters), func(ctx context.Context, i int) error {
		return b.patchStatus(ctx, clusters[i].live, func(c *clusterv1.ManagedCluster) { applyChurn(c, churnStart(schedule[i])) })
	})
	if err != nil {
		return startState{}, fmt.Errorf("setting the churn's start: %w", err)
	}
	_, after, err := b.waitQuiet(ctx, m, before.mirrorReconciles()+len(clusters))
	if err != nil {
		return startState{}, err
	}
	first := countsBetween(before, after).StatusWrites
	b.progress.logf("churn %s: start state published, %d status writes", m.name, first)
	return startState{first: first, after: after}, nil
}

// window is a stretch [from, to) of the schedule, and how long to wait
// after it before counting.
type window struct{ from, to, tail time.Duration }

// windowResult is what one window sent and the manager did.
type windowResult struct {
	sent   sendResult
	counts churnCounts
	// after is the manager's metrics once it was quiet, at quietAt.
	after   metricSet
	quietAt time.Time
	// queueAtEnd is the mirror's queue depth when the window's time ran out.
	queueAtEnd int
}

// churnWindow sends the window's events when due, waits its tail and until
// the manager is quiet, and counts what the manager did since before.
func (b *bench) churnWindow(ctx context.Context, m *managerProcess, clusters []*churnCluster, schedule []clusterSchedule, w window, before metricSet) (windowResult, error) {
	var res windowResult
	var err error
	if res.sent, err = b.sendChurn(ctx, m, clusters, schedule, w); err != nil {
		return res, err
	}
	end, err := m.scrape(ctx)
	if err != nil {
		return res, err
	}
	res.queueAtEnd = int(end.sum("workqueue_depth", mirrorQueue))
	if err := m.sleep(ctx, w.tail); err != nil {
		return res, err
	}
	if res.quietAt, res.after, err = b.waitQuiet(ctx, m, before.mirrorReconciles()); err != nil {
		return res, err
	}
	res.counts = countsBetween(before, res.after)
	res.counts.Sent, res.counts.Dropped = res.sent.sent, res.sent.dropped
	return res, nil
}

// sendResult is what the senders of one window did.
type sendResult struct {
	sent, dropped churnEvents
	// late is, for each event sent, how long after it was due.
	late   []time.Duration
	lastAt time.Time
}

// sendChurn sends the window's events of every cluster when due, on
// churnWorkers senders. An event still unsent when the window's time is up
// is dropped, so a run that falls behind says so instead of running long.
func (b *bench) sendChurn(ctx context.Context, m *managerProcess, clusters []*churnCluster, schedule []clusterSchedule, w window) (sendResult, error) {
	shards := min(churnWorkers, len(clusters))
	origin := time.Now().Add(-w.from)
	end := origin.Add(w.to)
	results := make([]sendResult, shards)
	var sent atomic.Int64
	due := countEvents(schedule, w.from, w.to).total()
	stop := b.tickEvery(progressEvery, func() {
		b.progress.logf("churn: %d/%d events sent; %s: %s", sent.Load(), due, m.name, m.status())
	})
	defer stop()
	err := forEach(ctx, shards, shards, func(ctx context.Context, s int) error {
		events := shardEvents(schedule, s, shards, w.from, w.to)
		return b.sendShard(ctx, m, clusters, events, origin, end, &results[s], &sent)
	})
	var out sendResult
	for _, r := range results {
		out.sent, out.dropped = out.sent.plus(r.sent), out.dropped.plus(r.dropped)
		out.late = append(out.late, r.late...)
		out.lastAt = maxTime(out.lastAt, r.lastAt)
	}
	return out, err
}

// sendShard sends one sender's events in order, each when due.
func (b *bench) sendShard(ctx context.Context, m *managerProcess, clusters []*churnCluster, events []timedEvent, origin, end time.Time, out *sendResult, sent *atomic.Int64) error {
	for i, e := range events {
		if time.Now().After(end) {
			for _, left := range events[i:] {
				out.dropped.add(left.Kind)
			}
			return nil
		}
		due := origin.Add(e.At)
		if err := m.sleep(ctx, time.Until(due)); err != nil {
			return err
		}
		at := time.Now()
		if err := b.patchStatus(ctx, clusters[e.cluster].live, func(c *clusterv1.ManagedCluster) { applyChurn(c, e.churnEvent) }); err != nil {
			return err
		}
		out.sent.add(e.Kind)
		out.late = append(out.late, at.Sub(due))
		out.lastAt = at
		sent.Add(1)
	}
	return nil
}

// countsBetween is what the manager did between two scrapes.
func countsBetween(before, after metricSet) churnCounts {
	writes := after.writes().minus(before.writes())
	c := churnCounts{
		Writes:            writes,
		StatusWrites:      writes.ByOperation[cpmetrics.OpStatus],
		HeldSignificant:   after.factsHeld(damping.Significant) - before.factsHeld(damping.Significant),
		HeldInsignificant: after.factsHeld(damping.Insignificant) - before.factsHeld(damping.Insignificant),
		Reconciles:        after.mirrorReconciles() - before.mirrorReconciles(),
	}
	sum, count := after.mirrorQueueWait()
	sumBefore, countBefore := before.mirrorQueueWait()
	if count > countBefore {
		c.MeanQueueWaitMillis = (sum - sumBefore) / (count - countBefore) * 1000
	}
	return c
}

// String is e.g. "status writes 120, held 30 significant / 200
// insignificant, 400 reconciles".
func (c churnCounts) String() string {
	return fmt.Sprintf("status writes %d, held %d significant / %d insignificant, %d reconciles (writes %s)",
		c.StatusWrites, c.HeldSignificant, c.HeldInsignificant, c.Reconciles, c.Writes)
}
