package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

const (
	// floorWorkers matches the manager's default --mirror-workers, so the
	// floor has the same concurrency towards the API server.
	floorWorkers = 16
	// floorFieldManager keeps the floor's writes apart from the mirror's.
	floorFieldManager = "clusterprofile-bench-floor"
)

// measureFloor times the API server taking exactly the writes the mirror
// needs for a cold start (one metadata apply that creates each profile, one
// status apply), from a client with the manager's rate limits. That is the
// best any controller could do; cold convergence is compared with it. The
// floor's profiles live in namespaces of their own and are deleted after, so
// they neither collide with nor weigh on the manager's run.
func (b *bench) measureFloor(ctx context.Context) error {
	namespaces := make([]string, len(b.world.namespaces))
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("floor-%03d", i)
	}
	if err := createNamespaces(ctx, b.setup, namespaces); err != nil {
		return err
	}
	cfg := rest.CopyConfig(b.env.Config)
	cfg.QPS, cfg.Burst = b.cfg.clientQPS(), b.cfg.burst
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	// The project's own writer, writing as nobody the manager knows.
	writer := clusterprofile.NewWriter(profilewrite.Writer{FieldManager: floorFieldManager}, c)
	n, m := len(b.world.clusters), len(namespaces)
	b.progress.logf("floor: %d profiles × 2 Server-Side Applies, %d workers", n*m, floorWorkers)

	start := time.Now()
	stopTicker := b.tickEvery(5*time.Second, func() { b.progress.logf("floor: running for %s", formatDuration(time.Since(start))) })
	// Cluster-major order, as the mirror reconciles a cluster at a time and
	// writes its profiles in every namespace.
	err = forEach(ctx, floorWorkers, n*m, func(ctx context.Context, i int) error {
		meta, status := b.world.profileWrites(namespaces[i%m], b.world.clusters[i/m].Name)
		_, err := writer.Execute(ctx, &profilewrite.Write{Meta: &meta, Status: &profilewrite.StatusWrite{Apply: status}})
		return err
	})
	took := time.Since(start)
	stopTicker()
	if err != nil {
		return err
	}
	requests := 2 * n * m
	b.res.Floor = &floorResult{Seconds: took.Seconds(), Requests: requests, RequestsPerSecond: float64(requests) / took.Seconds()}
	b.progress.logf("floor: %d requests in %s (%.0f/s)", requests, formatDuration(took), b.res.Floor.RequestsPerSecond)
	return b.deleteFloorProfiles(ctx, namespaces)
}

// deleteFloorProfiles removes the floor's profiles before the manager starts:
// it would otherwise delete them itself (they carry its manager name) and
// its cache would hold them.
func (b *bench) deleteFloorProfiles(ctx context.Context, namespaces []string) error {
	start := time.Now()
	err := forEach(ctx, len(namespaces), len(namespaces), func(ctx context.Context, i int) error {
		if err := b.setup.DeleteAllOf(ctx, &cpv1alpha1.ClusterProfile{}, client.InNamespace(namespaces[i])); err != nil {
			return fmt.Errorf("deleting floor profiles in %s: %w", namespaces[i], err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		left := &cpv1alpha1.ClusterProfileList{}
		if err := b.setup.List(ctx, left, client.InNamespace(ns), client.Limit(1)); err != nil {
			return fmt.Errorf("checking floor profiles in %s are gone: %w", ns, err)
		}
		if len(left.Items) > 0 {
			return fmt.Errorf("floor profiles left in %s after DeleteAllOf", ns)
		}
	}
	b.progress.logf("floor: profiles deleted in %s", formatDuration(time.Since(start)))
	return nil
}

// tickEvery calls tick periodically until the returned function is called.
func (b *bench) tickEvery(every time.Duration, tick func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick()
			}
		}
	}()
	return func() { close(done) }
}
