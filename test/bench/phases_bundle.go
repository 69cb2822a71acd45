package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
)

// tokenRotation rotates tokens as the managed-serviceaccount agent does and
// times the copies: first one token at a time (what a fleet sees day to
// day, as tokens expire apart), then every token at once (the worst case).
func (b *bench) tokenRotation(ctx context.Context) error {
	m := b.manager
	before, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	res := &rotationResult{Tokens: len(b.world.bundle.tokens), Namespaces: len(b.world.namespaces)}
	if res.Single, err = b.rotateOneAtATime(ctx, m); err != nil {
		return err
	}
	if res.All, err = b.rotateAll(ctx, m); err != nil {
		return err
	}
	_, after, err := b.waitQuiet(ctx, m, 0)
	if err != nil {
		return err
	}
	res.Writes = after.writes().minus(before.writes())
	rotated := (b.cfg.rotationSamples + res.Tokens) * res.Namespaces
	res.CopyWritesPerCopy = float64(res.Writes.ByWriter[credsync.FieldManager]) / float64(rotated)
	b.res.TokenRotation = res
	b.progress.logf("token rotation: writes %s (%.4f per copy)", res.Writes, res.CopyWritesPerCopy)
	return nil
}

// rotateOneAtATime rotates sampled tokens one after another, each timed from
// its write until every namespace's copy carries it.
func (b *bench) rotateOneAtATime(ctx context.Context, m *managerProcess) (*latencies, error) {
	samples := b.cfg.rotationSamples
	if samples == 0 {
		return nil, nil
	}
	tokens := len(b.world.bundle.tokens)
	took := make([]time.Duration, 0, samples)
	for s := range samples {
		i := s * tokens / samples
		name, token := b.world.copyName(i), fakeToken()
		b.copies.expectToken(name, token)
		if err := b.world.rotateToken(ctx, b.setup, i, token); err != nil {
			return nil, err
		}
		sent := time.Now()
		waitCtx, cancel := context.WithTimeout(ctx, changeTimeout)
		at, err := b.waitFor(waitCtx, m, func() time.Time { return b.copies.seenEverywhere(name) }, nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("rotating token %s: %w", name, err)
		}
		took = append(took, max(at.Sub(sent), 0))
	}
	l := summarize(took)
	b.progress.logf("token rotation, one at a time: %d tokens, every copy updated p50 %.0fms, p99 %.0fms",
		samples, l.P50Millis, l.P99Millis)
	return &l, nil
}

// rotateAll rotates every token at once and times each copy from its
// token's write until it carries it.
func (b *bench) rotateAll(ctx context.Context, m *managerProcess) (*bulkRotation, error) {
	tokens := make([][]byte, len(b.world.bundle.tokens))
	for i := range tokens {
		tokens[i] = fakeToken()
		b.copies.expectToken(b.world.copyName(i), tokens[i])
	}
	sentAt := make([]time.Time, len(tokens))
	start := time.Now()
	err := forEach(ctx, setupWorkers, len(tokens), func(ctx context.Context, i int) error {
		if err := b.world.rotateToken(ctx, b.setup, i, tokens[i]); err != nil {
			return err
		}
		sentAt[i] = time.Now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	written := time.Since(start)
	doneAt, err := b.waitFor(ctx, m, func() time.Time { _, at := b.copies.allCurrent(); return at }, func() string {
		current, _ := b.copies.allCurrent()
		return fmt.Sprintf("token rotation, all at once: %d/%d copies updated; manager: %s", current, b.world.copyCount(), m.status())
	})
	if err != nil {
		return nil, err
	}
	var took []time.Duration
	for i := range tokens {
		for _, at := range b.copies.seenTimes(b.world.copyName(i)) {
			took = append(took, max(at.Sub(sentAt[i]), 0))
		}
	}
	r := &bulkRotation{WriteSeconds: written.Seconds(), AllUpdatedSeconds: doneAt.Sub(start).Seconds(), PerCopy: summarize(took)}
	b.progress.logf("token rotation, all at once: %d tokens written in %s, all %d copies updated after %s (per copy p50 %.0fms, p99 %.0fms)",
		len(tokens), formatDuration(written), len(took), formatSeconds(r.AllUpdatedSeconds), r.PerCopy.P50Millis, r.PerCopy.P99Millis)
	return r, nil
}

// caRotation renews cluster-proxy's user server certificate and times it
// reaching every profile and, when they use cluster-proxy's entry, every
// Argo CD cluster Secret.
func (b *bench) caRotation(ctx context.Context) error {
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
	ca := fakePEM()
	want, access := b.obs.expectations()
	access.proxyCA = digest(ca)
	b.obs.expect(want, access)
	if err := b.world.rotateProxyCA(ctx, b.setup, ca); err != nil {
		return err
	}
	sent := time.Now()
	// Argo CD's cluster Secrets carry the CA of the entry they use.
	argoCD := b.ownedObserverOf("argocd")
	if argoCD != nil {
		argoCD.expect(b.world.wantArgoCD())
	}
	target := b.world.profileCount()
	doneAt, err := b.waitFor(ctx, m, func() time.Time { return b.caRotatedAt(argoCD) }, func() string {
		return fmt.Sprintf("CA rotation: %d/%d profiles carry the new certificate%s; manager: %s",
			b.obs.convergence().complete, target, b.ownedProgress(), m.status())
	})
	if err != nil {
		return err
	}
	_, after, err := b.waitQuiet(ctx, m, 0)
	if err != nil {
		return err
	}
	ownedAfter, err := b.audit.read()
	if err != nil {
		return err
	}
	writes := after.writes().minus(before.writes())
	b.res.CARotation = &caRotationResult{
		Profiles: target, Seconds: max(doneAt.Sub(sent), 0).Seconds(), Writes: writes,
		ProxyWritesPerProfile: float64(writes.ByWriter[accessprovider.ProxyFieldManager]) / float64(target),
	}
	if copies := b.world.copyCount(); copies > 0 {
		b.res.CARotation.CopyWritesPerCopy = float64(writes.ByWriter[credsync.FieldManager]) / float64(copies)
	}
	if argoCD != nil {
		for _, o := range b.ownedResults(ownedAfter.minus(ownedBefore), b.audit.rewritesSince(rewritesBefore), sent) {
			if o.Gate == "argocd" {
				b.res.CARotation.ArgoCD = &o
			}
		}
	}
	b.progress.logf("CA rotation: %d profiles in %s; writes %s", target, formatDuration(doneAt.Sub(sent)), writes)
	return nil
}

// summarize is the distribution of some latencies.
func summarize(took []time.Duration) latencies {
	if len(took) == 0 {
		return latencies{}
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	return latencies{
		Samples:   len(took),
		P50Millis: millis(percentile(took, 0.50)),
		P99Millis: millis(percentile(took, 0.99)),
		MaxMillis: millis(took[len(took)-1]),
	}
}

// caRotatedAt is when every profile, and every Argo CD cluster Secret when
// argoCD observes them, last came to carry the current certificate; zero
// while one does not.
func (b *bench) caRotatedAt(argoCD *ownedObserver) time.Time {
	at := b.obs.convergence().allCompleteAt
	if argoCD == nil || at.IsZero() {
		return at
	}
	_, _, secretsAt := argoCD.allCurrent()
	if secretsAt.IsZero() {
		return secretsAt
	}
	return maxTime(at, secretsAt)
}

// ownedObserverOf is the observer of the objects the gate's capability
// owns; nil when it does not run.
func (b *bench) ownedObserverOf(gate string) *ownedObserver {
	for _, o := range b.owned {
		if o.kind.gate == gate {
			return o
		}
	}
	return nil
}
