package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
)

const (
	// floorWorkers matches the manager's default --mirror-workers, so the
	// floor has the same concurrency towards the API server.
	floorWorkers = 16
	// floorFieldManager keeps the floor's writes apart from the mirror's.
	floorFieldManager = "clusterprofile-bench-floor"
)

// measureFloor times the API server taking exactly the writes the run's
// capabilities need for a cold start, from a client with the manager's rate
// limits: per profile, the mirror's metadata apply (which creates it) and
// status apply, each access provider's status apply, and a create per token
// copy. That is the best any controller could do; cold convergence is
// compared with it. The floor's objects live in namespaces of their own and
// are deleted after, so they neither collide with nor weigh on the manager's
// run.
func (b *bench) measureFloor(ctx context.Context) error {
	namespaces := make([]string, len(b.world.namespaces))
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("floor-%03d", i)
	}
	if err := createNamespaces(ctx, b.setup, namespaces); err != nil {
		return err
	}
	c, err := newClient(b.env.Config, b.cfg.clientQPS(), b.cfg.burst)
	if err != nil {
		return err
	}
	f := &floorWriter{world: b.world, client: c, writers: b.floorWriters(c)}
	n, m := len(b.world.clusters), len(namespaces)
	perProfile := f.requestsPerProfile()
	b.progress.logf("floor: %d profiles × %d writes (%s), %d workers", n*m, perProfile, f.describe(), floorWorkers)

	start := time.Now()
	stopTicker := b.tickEvery(5*time.Second, func() { b.progress.logf("floor: running for %s", formatDuration(time.Since(start))) })
	// Cluster-major order, as the mirror reconciles a cluster at a time and
	// writes its profiles in every namespace.
	err = forEach(ctx, floorWorkers, n*m, func(ctx context.Context, i int) error {
		return f.publish(ctx, namespaces[i%m], i/m)
	})
	took := time.Since(start)
	stopTicker()
	if err != nil {
		return err
	}
	requests := perProfile * n * m
	b.res.Floor = &floorResult{Seconds: took.Seconds(), Requests: requests, RequestsPerSecond: float64(requests) / took.Seconds(),
		Writes: f.describe()}
	b.progress.logf("floor: %d requests in %s (%.0f/s)", requests, formatDuration(took), b.res.Floor.RequestsPerSecond)
	return b.deleteFloorObjects(ctx, namespaces)
}

// floorWriters are the project's own profile writers, one per capability
// that writes profiles, writing as nobody the manager knows.
func (b *bench) floorWriters(c client.Client) []*clusterprofile.Writer {
	identities := []profilewrite.Identity{{FieldManager: floorFieldManager}}
	if b.cfg.gates["proxy"] {
		proxy := accessprovider.ProxyIdentity
		proxy.FieldManager = floorFieldManager + "-proxy"
		identities = append(identities, proxy)
	}
	if b.cfg.gates["direct"] {
		direct := accessprovider.DirectIdentity(accessprovider.DefaultDirectEntryName)
		direct.FieldManager = floorFieldManager + "-direct"
		identities = append(identities, direct)
	}
	writers := make([]*clusterprofile.Writer, 0, len(identities))
	for _, identity := range identities {
		writers = append(writers, clusterprofile.NewWriter(identity, c))
	}
	return writers
}

// floorWriter sends the floor's writes for one profile at a time.
type floorWriter struct {
	world  *world
	client client.Client
	// writers[0] is the mirror's; the rest are the access providers'.
	writers []*clusterprofile.Writer
}

func (f *floorWriter) requestsPerProfile() int { return 2 + len(f.writers) - 1 + f.world.bundle.msas }

func (f *floorWriter) describe() string {
	out := "mirror metadata + status"
	if extra := len(f.writers) - 1; extra > 0 {
		out += fmt.Sprintf(", %d access provider status", extra)
	}
	if k := f.world.bundle.msas; k > 0 {
		out += fmt.Sprintf(", %d token copy create", k)
	}
	return out
}

// publish writes cluster i's profile in namespace and what the other
// capabilities add to it.
func (f *floorWriter) publish(ctx context.Context, namespace string, i int) error {
	cluster := f.world.clusters[i]
	meta, status := f.world.profileWrites(namespace, cluster.Name)
	profile, err := f.writers[0].Execute(ctx, &profilewrite.Write{Meta: &meta, Status: &profilewrite.StatusWrite{Apply: status}})
	if err != nil {
		return err
	}
	for _, w := range f.writers[1:] {
		apply := f.world.accessStatus(w.Identity(), namespace, cluster)
		if _, err := w.Execute(ctx, &profilewrite.Write{Current: profile, Status: &profilewrite.StatusWrite{Apply: apply}}); err != nil {
			return err
		}
	}
	for k := range f.world.bundle.msas {
		if err := f.client.Create(ctx, f.world.tokenCopy(namespace, profile, i, k)); err != nil {
			return fmt.Errorf("creating a token copy: %w", err)
		}
	}
	return nil
}

// deleteFloorObjects removes the floor's profiles and copies before the
// manager starts: it would otherwise delete them itself (they carry its
// manager name) and its cache would hold them.
func (b *bench) deleteFloorObjects(ctx context.Context, namespaces []string) error {
	start := time.Now()
	err := forEach(ctx, len(namespaces), len(namespaces), func(ctx context.Context, i int) error {
		if err := b.deleteAllOf(ctx, &corev1.Secret{}, namespaces[i]); err != nil {
			return fmt.Errorf("deleting floor token copies in %s: %w", namespaces[i], err)
		}
		if err := b.deleteAllOf(ctx, &cpv1alpha1.ClusterProfile{}, namespaces[i]); err != nil {
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

// deleteAllOf deletes a namespace's objects of one kind, retried: a delete
// collection of thousands of objects can outlast the request's deadline on a
// busy machine and end in a stream error after deleting part of them.
func (b *bench) deleteAllOf(ctx context.Context, obj client.Object, namespace string) error {
	return retry.OnError(wait.Backoff{Steps: 5, Duration: time.Second, Factor: 2}, func(error) bool { return ctx.Err() == nil },
		func() error { return b.setup.DeleteAllOf(ctx, obj, client.InNamespace(namespace)) })
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
