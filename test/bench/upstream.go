package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// upstreamQuietFor is how long upstream's mirror, which has no metrics, must
// leave every profile alone to count as settled.
const upstreamQuietFor = 5 * time.Second

// upstreamProcess names upstream's mirror in the results.
const upstreamProcess = "upstream"

// upstream measures OCM's own mirror (hack/_upstreammirror) on the same
// world, after this project's manager has stopped and its profiles are
// gone: cold convergence, writes (counted by the API server, for both),
// propagation, unbind and memory.
func (b *bench) upstream(ctx context.Context) error {
	if b.manager != nil {
		if err := b.stopManager(); err != nil {
			return err
		}
	}
	if err := b.resetForUpstream(ctx); err != nil {
		return err
	}
	before, err := b.apiServer.profileCounts(ctx)
	if err != nil {
		return err
	}
	p, err := b.startUpstream()
	if err != nil {
		return err
	}
	res := &upstreamResult{}
	b.res.Upstream = res
	p.enterPhase("cold convergence")
	if err := b.upstreamCold(ctx, p, res, before); err != nil {
		return err
	}
	p.enterPhase("propagation")
	if res.Propagation, err = b.upstreamPropagation(ctx, p); err != nil {
		return err
	}
	p.enterPhase("deletion")
	if res.UnbindSeconds, err = b.unbind(ctx, p, b.world.namespaces[0]); err != nil {
		return err
	}
	took, stopErr := p.stop(shutdownTimeout)
	mem := p.memory()
	mem.ShutdownSeconds, mem.CleanExit = took.Seconds(), stopErr == nil
	res.PeakRSSMiB = mem.PeakRSSMiB
	b.res.Memory = append(b.res.Memory, mem)
	b.progress.logf("upstream: stopped (peak RSS %.0f MiB)", mem.PeakRSSMiB)
	return stopErr
}

// resetForUpstream deletes this project's profiles, rebinds the namespace
// the deletion phase unbound, and tells the observer what upstream writes:
// the cluster's claims as properties, and no access entries.
func (b *bench) resetForUpstream(ctx context.Context) error {
	want := map[string]expectation{}
	for _, c := range b.world.clusters {
		want[c.Name] = expectation{version: b.world.status[c.Name].Version, properties: len(c.Status.ClusterClaims)}
	}
	b.obs.expect(want, accessExpectation{})
	for _, ns := range b.world.namespaces {
		if err := b.setup.DeleteAllOf(ctx, &cpv1alpha1.ClusterProfile{}, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("deleting profiles in %s: %w", ns, err)
		}
	}
	_, err := b.waitFor(ctx, nil, func() time.Time {
		if b.obs.convergence().existing == 0 {
			return time.Now()
		}
		return time.Time{}
	}, nil)
	if err != nil {
		return fmt.Errorf("waiting for the profiles to go: %w", err)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{}
	err = b.setup.Get(ctx, client.ObjectKey{Namespace: b.world.namespaces[0], Name: setName}, binding)
	if apierrors.IsNotFound(err) {
		err = b.world.createBindings(ctx, b.setup, b.world.namespaces[:1])
	}
	return err
}

func (b *bench) startUpstream() (*managerProcess, error) {
	args := []string{
		"--kubeconfig=" + b.kubeconfig,
		"--kube-api-qps=" + strconv.FormatFloat(float64(b.cfg.clientQPS()), 'g', -1, 32),
		"--kube-api-burst=" + strconv.Itoa(b.cfg.burst),
	}
	// The same GOGC as ours, so that the memory compares the programs, not
	// their collectors' settings.
	env := managerOptions{gcPercent: b.cfg.gcPercent}.env()
	p, err := startProcess(upstreamProcess, b.cfg.upstreamPath, args, filepath.Join(b.dir, "upstream.log"), "", env...)
	if err != nil {
		return nil, err
	}
	b.progress.logf("started upstream's mirror (pid %d, log %s)", p.pid(), p.logPath)
	return p, nil
}

// upstreamCold times upstream's mirror until every profile is complete and
// it has then left them alone for upstreamQuietFor.
func (b *bench) upstreamCold(ctx context.Context, p *managerProcess, res *upstreamResult, before profileCounts) error {
	target := b.world.profileCount()
	doneAt, err := b.waitFor(ctx, p, func() time.Time { return b.obs.convergence().allCompleteAt }, func() string {
		c := b.obs.convergence()
		return fmt.Sprintf("upstream cold: %d/%d profiles exist, %d complete", c.existing, target, c.complete)
	})
	if err != nil {
		return fmt.Errorf("waiting for upstream's profiles: %w", err)
	}
	quietAt, err := b.waitFor(ctx, p, func() time.Time {
		if last := b.obs.quietSince(); time.Since(last) >= upstreamQuietFor {
			return last
		}
		return time.Time{}
	}, nil)
	if err != nil {
		return err
	}
	after, err := b.apiServer.profileCounts(ctx)
	if err != nil {
		return err
	}
	c := b.obs.convergence()
	res.FirstProfileSeconds = c.firstAt.Sub(p.started).Seconds()
	res.AllCompleteSeconds = doneAt.Sub(p.started).Seconds()
	res.QuietSeconds = quietAt.Sub(p.started).Seconds()
	res.APIServerProfileWrites = after.minus(before).writes
	res.WritesPerProfile = float64(res.APIServerProfileWrites) / float64(target)
	if b.res.Cold != nil {
		res.OursOverUpstream = b.res.Cold.AllCompleteSeconds / res.AllCompleteSeconds
	}
	b.progress.logf("upstream cold: complete after %s, settled after %s; %d writes (%.2f per profile)",
		formatSeconds(res.AllCompleteSeconds), formatSeconds(res.QuietSeconds), res.APIServerProfileWrites, res.WritesPerProfile)
	return nil
}

// upstreamPropagation flips the same sampled clusters as the propagation
// phase, with reasons of its own.
func (b *bench) upstreamPropagation(ctx context.Context, p *managerProcess) (*latencies, error) {
	samples := b.cfg.propagationSamples
	took := make([]time.Duration, 0, samples)
	for i := range samples {
		cluster := b.world.propagationSample(i, samples)
		// Upstream copies the cluster's reason.
		latency, err := b.propagateOne(ctx, p, cluster, fmt.Sprintf("BenchUpstreamUnavailable%d", i), func(r string) string { return r })
		if err != nil {
			return nil, fmt.Errorf("upstream sample %d (cluster %s): %w", i, cluster, err)
		}
		took = append(took, latency)
	}
	l := summarize(took)
	b.progress.logf("upstream propagation: p50 %.0fms, p99 %.0fms", l.P50Millis, l.P99Millis)
	return &l, nil
}

// unbind deletes a namespace's binding and times the removal of every
// profile there.
func (b *bench) unbind(ctx context.Context, p *managerProcess, ns string) (float64, error) {
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: setName}}
	if err := b.setup.Delete(ctx, binding); err != nil {
		return 0, fmt.Errorf("deleting ManagedClusterSetBinding %s/%s: %w", ns, setName, err)
	}
	sent := time.Now()
	waitCtx, cancel := context.WithTimeout(ctx, changeTimeout)
	defer cancel()
	gone, err := b.waitFor(waitCtx, p, func() time.Time {
		if left, emptiedAt := b.obs.namespace(ns); left == 0 {
			return emptiedAt
		}
		return time.Time{}
	}, func() string {
		left, _ := b.obs.namespace(ns)
		return fmt.Sprintf("unbind: %d profiles left in %s", left, ns)
	})
	if err != nil {
		return 0, err
	}
	return max(gone.Sub(sent), 0).Seconds(), nil
}
