package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
)

const (
	// quietFor is how long the mirror must sit idle to count as settled.
	quietFor = 2 * time.Second
	// observePoll is how often in-memory observer state is checked; the
	// times measured come from the informer events, not from this poll.
	observePoll = 10 * time.Millisecond
	// progressEvery spaces the progress lines of long waits.
	progressEvery = 5 * time.Second
	// changeTimeout bounds the wait for one change to reach every profile.
	changeTimeout = 2 * time.Minute
)

// coldConvergence starts the manager on the untouched world and times it
// until every desired profile exists with its full status and, with the
// syncer, every token copy exists, and every object the capabilities own is
// as wanted.
func (b *bench) coldConvergence(ctx context.Context) error {
	profilesBefore, err := b.apiServer.profileCounts(ctx)
	if err != nil {
		return err
	}
	ownedBefore, err := b.audit.read()
	if err != nil {
		return err
	}
	rewritesBefore := b.audit.rewriteCount()
	cpuBefore := b.cpuNow(nil)
	m, err := b.startManager("cold")
	if err != nil {
		return err
	}
	doneAt, err := b.waitConverged(ctx, m)
	if err != nil {
		return err
	}
	cpu := b.cpuNow(m).minus(cpuBefore)
	c := b.obs.convergence()
	b.progress.logf("cold: converged after %s; CPU %s; waiting for the manager to settle", formatDuration(doneAt.Sub(m.started)), cpu)
	quietAt, set, err := b.waitQuiet(ctx, m, len(b.world.clusters))
	if err != nil {
		return err
	}
	profilesAfter, err := b.apiServer.profileCounts(ctx)
	if err != nil {
		return err
	}
	ownedAfter, err := b.audit.read()
	if err != nil {
		return err
	}
	writes, profiles := set.writes(), profilesAfter.minus(profilesBefore)
	b.res.Cold = &coldResult{
		APIServerProfileWrites:   profiles.writes,
		APIServerStorageWrites:   profiles.storageWrites,
		FirstProfileSeconds:      c.firstAt.Sub(m.started).Seconds(),
		AllExistSeconds:          c.allExistAt.Sub(m.started).Seconds(),
		AllCompleteSeconds:       c.allCompleteAt.Sub(m.started).Seconds(),
		ConvergedSeconds:         doneAt.Sub(m.started).Seconds(),
		CPUSeconds:               cpu,
		QuietSeconds:             quietAt.Sub(m.started).Seconds(),
		RatioToFloor:             doneAt.Sub(m.started).Seconds() / b.res.Floor.Seconds,
		RatioToFloorAfterStartup: doneAt.Sub(c.firstAt).Seconds() / b.res.Floor.Seconds,
		Reconciles:               set.reconciles(),
		Writes:                   writes,
		WritesPerProfile:         float64(writes.Total) / float64(b.world.profileCount()),
		Owned:                    b.ownedResults(ownedAfter.minus(ownedBefore), b.audit.rewritesSince(rewritesBefore), m.started),
	}
	if copies := b.world.copyCount(); copies > 0 {
		_, at := b.copies.allCurrent()
		b.res.Cold.AllCopiesSeconds = at.Sub(m.started).Seconds()
		b.res.Cold.CopyWritesPerCopy = float64(writes.ByWriter[credsync.FieldManager]) / float64(copies)
	}
	b.progress.logf("cold: settled; writes %s", writes)
	return nil
}

// waitConverged waits until every profile is complete, every token copy
// carries its token and every owned object is as wanted, returning when the
// last of them got there.
func (b *bench) waitConverged(ctx context.Context, m *managerProcess) (time.Time, error) {
	profiles, copies := b.world.profileCount(), b.world.copyCount()
	doneAt, err := b.waitFor(ctx, m, func() time.Time {
		at := b.obs.convergence().allCompleteAt
		if at.IsZero() {
			return at
		}
		if copies > 0 {
			_, copiesAt := b.copies.allCurrent()
			if copiesAt.IsZero() {
				return copiesAt
			}
			at = maxTime(at, copiesAt)
		}
		for _, o := range b.owned {
			_, _, ownedAt := o.allCurrent()
			if ownedAt.IsZero() {
				return ownedAt
			}
			at = maxTime(at, ownedAt)
		}
		return at
	}, func() string {
		c := b.obs.convergence()
		line := fmt.Sprintf("%d/%d profiles exist, %d complete", c.existing, profiles, c.complete)
		if copies > 0 {
			current, _ := b.copies.allCurrent()
			line += fmt.Sprintf(", %d/%d token copies", current, copies)
		}
		return line + b.ownedProgress() + "; " + m.name + ": " + m.status()
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("waiting for every profile, copy and owned object: %w", err)
	}
	return doneAt, nil
}

// ownedProgress is how far the owned objects are, for progress lines.
func (b *bench) ownedProgress() string {
	line := ""
	for _, o := range b.owned {
		current, target, _ := o.allCurrent()
		line += fmt.Sprintf(", %d/%d %ss", current, target, o.kind.kind)
	}
	return line
}

// ownedResults are each owned kind's writes and the first of its rewrites,
// and when all its objects came to be as wanted when started is set.
func (b *bench) ownedResults(writes ownedWrites, rewrites []rewrite, started time.Time) []ownedResult {
	var out []ownedResult
	for _, o := range b.owned {
		_, objects, at := o.allCurrent()
		r := ownedResult{Gate: o.kind.gate, Kind: o.kind.kind, Objects: objects, Writes: writes[o.kind.gate],
			Rewrites: rewritesOf(rewrites, o.kind.gate)}
		if objects > 0 {
			r.WritesPerObject = float64(r.Writes) / float64(objects)
		}
		if !started.IsZero() && !at.IsZero() {
			r.CompleteSeconds = at.Sub(started).Seconds()
		}
		out = append(out, r)
	}
	return out
}

// idle watches the converged manager for writes it has no reason to send.
func (b *bench) idle(ctx context.Context) error {
	m := b.manager
	before, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	ownedBefore, err := b.audit.read()
	if err != nil {
		return err
	}
	rewritesBefore := b.audit.rewriteCount()
	b.progress.logf("idle: watching for %s", b.cfg.idle)
	if err := m.sleep(ctx, b.cfg.idle); err != nil {
		return err
	}
	after, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	ownedAfter, err := b.audit.read()
	if err != nil {
		return err
	}
	b.res.Idle = &idleResult{
		Seconds:    b.cfg.idle.Seconds(),
		Reconciles: after.reconciles() - before.reconciles(),
		Writes:     after.writes().minus(before.writes()),
		Owned:      b.ownedResults(ownedAfter.minus(ownedBefore), b.audit.rewritesSince(rewritesBefore), time.Time{}),
	}
	b.progress.logf("idle: writes %s", b.res.Idle.Writes)
	return nil
}

// restartResync stops the manager with SIGTERM and times a fresh one until
// it has reconciled every cluster, which on an unchanged world must write
// nothing.
func (b *bench) restartResync(ctx context.Context) error {
	stopErr := b.stopManager()
	stopped := b.res.Memory[len(b.res.Memory)-1]
	ownedBefore, err := b.audit.read()
	if err != nil {
		return err
	}
	rewritesBefore := b.audit.rewriteCount()
	m, err := b.startManager("restarted")
	if err != nil {
		return err
	}
	quietAt, set, err := b.waitQuiet(ctx, m, len(b.world.clusters))
	if err != nil {
		return err
	}
	ownedAfter, err := b.audit.read()
	if err != nil {
		return err
	}
	keys, byQueue := set.keysQueued()
	b.res.Restart = &restartResult{
		ShutdownSeconds:  stopped.ShutdownSeconds,
		CleanExit:        stopErr == nil,
		ExitError:        stopped.ExitError,
		ResyncSeconds:    quietAt.Sub(m.started).Seconds(),
		Reconciles:       set.reconciles(),
		KeysQueued:       keys,
		KeysByController: byQueue,
		Writes:           set.writes(),
		Owned:            b.ownedResults(ownedAfter.minus(ownedBefore), b.audit.rewritesSince(rewritesBefore), time.Time{}),
	}
	b.progress.logf("restart: resynced %d reconciles (%d keys queued) in %s; writes %s",
		set.reconciles(), keys, formatDuration(quietAt.Sub(m.started)), b.res.Restart.Writes)
	return nil
}

// propagation flips the Available condition of sampled clusters one at a
// time and times each until every profile of the cluster shows it.
func (b *bench) propagation(ctx context.Context) error {
	m := b.manager
	samples := b.cfg.propagationSamples
	if samples == 0 {
		return nil
	}
	before, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	latencies := make([]time.Duration, 0, samples)
	for i := range samples {
		cluster := b.world.propagationSample(i, samples)
		latency, err := b.propagateOne(ctx, m, cluster, fmt.Sprintf("BenchUnavailable%d", i), b.healthyReason)
		if err != nil {
			return fmt.Errorf("sample %d (cluster %s): %w", i, cluster, err)
		}
		latencies = append(latencies, latency)
		if (i+1)%10 == 0 || i+1 == samples {
			b.progress.logf("propagation: %d/%d changes propagated", i+1, samples)
		}
	}
	_, after, err := b.waitQuiet(ctx, m, 0)
	if err != nil {
		return err
	}
	writes := after.writes().minus(before.writes())
	changed, l := samples*len(b.world.namespaces), summarize(latencies)
	b.res.Propagation = &propagationResult{
		Samples:                 samples,
		ChangedProfiles:         changed,
		P50Millis:               l.P50Millis,
		P99Millis:               l.P99Millis,
		MaxMillis:               l.MaxMillis,
		Writes:                  writes,
		WritesPerChangedProfile: float64(writes.Total) / float64(changed),
	}
	b.progress.logf("propagation: p50 %.0fms, p99 %.0fms; writes %s",
		b.res.Propagation.P50Millis, b.res.Propagation.P99Millis, writes)
	return nil
}

// propagationSample is the i-th of samples clusters whose changes time
// propagation, spread evenly over the world: the propagation phase, its
// floor and upstream's run all time the same ones.
func (w *world) propagationSample(i, samples int) string {
	return w.clusters[i*len(w.clusters)/samples].Name
}

// propagateOne sets the cluster's Available condition to False with a new
// reason and returns the time from the status update returning until every
// profile of the cluster carries it, with the reason profileReason makes of
// it.
func (b *bench) propagateOne(ctx context.Context, m *managerProcess, cluster, reason string, profileReason func(string) string) (time.Duration, error) {
	// Waiting starts before the update, so no event can slip past.
	b.obs.expectHealthy(cluster, string(metav1.ConditionFalse), profileReason(reason))
	if err := setAvailable(ctx, b.setup, cluster, metav1.ConditionFalse, reason); err != nil {
		return 0, err
	}
	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, changeTimeout)
	defer cancel()
	reached, err := b.waitFor(ctx, m, func() time.Time { return b.obs.healthyReachedAt(cluster) }, nil)
	if err != nil {
		return 0, err
	}
	// The watch event can in theory beat the update's own response.
	return max(reached.Sub(sent), 0), nil
}

// healthyReason is the reason this project's mirror gives a profile's
// ControlPlaneHealthy for a cluster's Available reason: with the agent on
// and no agent reporting (none runs here), it says the klusterlet's
// condition stands in.
func (b *bench) healthyReason(available string) string {
	if b.cfg.gates["agent"] {
		return mirror.ReasonNoFreshAgentReport
	}
	return available
}

// setAvailable changes the cluster's Available condition, as the
// registration controller does when a cluster's lease expires.
func setAvailable(ctx context.Context, c client.Client, name string, status metav1.ConditionStatus, reason string) error {
	cluster := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, cluster); err != nil {
		return fmt.Errorf("reading ManagedCluster %s: %w", name, err)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: status, Reason: reason,
		Message: "Set by the ClusterProfile benchmark",
	})
	if err := c.Status().Update(ctx, cluster); err != nil {
		return fmt.Errorf("updating status of ManagedCluster %s: %w", name, err)
	}
	return nil
}

// deletion deletes one namespace's binding and times the removal of every
// profile there, with its token copies and the owned objects that go with
// them.
func (b *bench) deletion(ctx context.Context) error {
	m := b.manager
	ns := b.world.namespaces[0]
	before, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: setName}}
	b.progress.logf("deletion: deleting ManagedClusterSetBinding %s/%s", ns, setName)
	if err := b.setup.Delete(ctx, binding); err != nil {
		return fmt.Errorf("deleting ManagedClusterSetBinding %s/%s: %w", ns, setName, err)
	}
	sent := time.Now()
	waitCtx, cancel := context.WithTimeout(ctx, changeTimeout)
	defer cancel()
	gone, err := b.waitFor(waitCtx, m, func() time.Time { return b.emptiedAt(ns) }, func() string {
		return "deletion: " + b.leftIn(ns) + "; manager: " + m.status()
	})
	if err != nil {
		return err
	}
	_, after, err := b.waitQuiet(ctx, m, 0)
	if err != nil {
		return err
	}
	b.res.Deletion = &deletionResult{
		Namespace: ns,
		Profiles:  len(b.world.clusters),
		Copies:    len(b.world.bundle.tokens),
		Owned:     b.world.ownedIn(ns),
		Seconds:   max(gone.Sub(sent), 0).Seconds(),
		Writes:    after.writes().minus(before.writes()),
	}
	b.progress.logf("deletion: %d profiles gone in %s; writes %s",
		len(b.world.clusters), formatDuration(gone.Sub(sent)), b.res.Deletion.Writes)
	return nil
}

// emptiedAt is when namespace last held no profile, token copy or owned
// object; zero while it holds one.
func (b *bench) emptiedAt(ns string) time.Time {
	left, emptiedAt := b.obs.namespace(ns)
	if left > 0 {
		return time.Time{}
	}
	if b.copies != nil {
		copiesLeft, copiesGoneAt := b.copies.inNamespace(ns)
		if copiesLeft > 0 {
			return time.Time{}
		}
		emptiedAt = maxTime(emptiedAt, copiesGoneAt)
	}
	for _, o := range b.owned {
		ownedLeft, ownedGoneAt := o.inNamespace(ns)
		if ownedLeft > 0 {
			return time.Time{}
		}
		emptiedAt = maxTime(emptiedAt, ownedGoneAt)
	}
	return emptiedAt
}

// leftIn says what namespace still holds, for progress lines.
func (b *bench) leftIn(ns string) string {
	left, _ := b.obs.namespace(ns)
	line := fmt.Sprintf("%d profiles left in %s", left, ns)
	if b.copies != nil {
		copiesLeft, _ := b.copies.inNamespace(ns)
		line += fmt.Sprintf(", %d token copies", copiesLeft)
	}
	for _, o := range b.owned {
		ownedLeft, _ := o.inNamespace(ns)
		line += fmt.Sprintf(", %d %ss", ownedLeft, o.kind.kind)
	}
	return line
}

// waitFor polls reachedAt, which reads the observer's in-memory state, until
// it returns a time, printing describe's progress line now and then. It fails
// when ctx ends or the manager exits.
func (b *bench) waitFor(ctx context.Context, m *managerProcess, reachedAt func() time.Time, describe func() string) (time.Time, error) {
	lastProgress := time.Now()
	for {
		if at := reachedAt(); !at.IsZero() {
			return at, nil
		}
		if describe != nil && time.Since(lastProgress) >= progressEvery {
			b.progress.logf("%s", describe())
			lastProgress = time.Now()
		}
		if err := m.sleep(ctx, observePoll); err != nil {
			return time.Time{}, err
		}
	}
}

// waitQuiet is managerProcess.waitQuiet with progress lines.
func (b *bench) waitQuiet(ctx context.Context, m *managerProcess, minReconciles int) (time.Time, metricSet, error) {
	stop := b.tickEvery(progressEvery, func() { b.progress.logf("waiting for the manager to settle: %s", m.status()) })
	defer stop()
	at, set, err := m.waitQuiet(ctx, minReconciles, quietFor)
	if err != nil {
		return at, set, fmt.Errorf("waiting for manager %q to settle: %w", m.name, err)
	}
	return at, set, nil
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
