package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
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
// copy; then one write per object of each capability that owns objects (an
// apply per MultiKueueCluster, a create per Argo CD cluster Secret, each
// written after its profile, and an apply per PlacementDecision slice,
// once every profile exists). That is the best any controller could do;
// cold convergence is compared with it. The floor's objects live in
// namespaces of their own (its MultiKueueClusters, cluster-scoped, under
// the names the manager's take) and are deleted after, so they neither
// collide with nor weigh on the manager's run; etcd is then compacted and
// defragmented (compactEtcd). With -floor-load the floor runs a second
// time, beside a busy loop (floorRound).
func (b *bench) measureFloor(ctx context.Context) error {
	namespaces := make([]string, len(b.world.namespaces))
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("floor-%03d", i)
	}
	if err := createNamespaces(ctx, b.setup, namespaces); err != nil {
		return err
	}
	var err error
	if b.res.Floor, err = b.floorRound(ctx, namespaces, 0); err != nil || b.cfg.floorLoad == 0 {
		return err
	}
	b.res.LoadedFloor, err = b.floorRound(ctx, namespaces, b.cfg.floorLoad)
	return err
}

// floorRound sends the floor's writes to the floor's namespaces, with a
// busy loop taking load of a core beside them (none at 0), and deletes
// what they wrote; the propagation floor is timed in the round without
// load.
func (b *bench) floorRound(ctx context.Context, namespaces []string, load float64) (*floorResult, error) {
	c, err := newClient(b.env.Config, b.cfg.clientQPS(), b.cfg.burst)
	if err != nil {
		return nil, err
	}
	f := &floorWriter{world: b.world, client: c, writers: b.floorWriters(c), namespaces: namespaces}
	// The slices' Placements are the world's, not writes of a capability.
	if f.slices, err = b.floorSlices(ctx, namespaces); err != nil {
		return nil, err
	}
	plan := b.world.floorWrites()
	b.progress.logf("floor: %d profiles × %d writes (%s), %d workers", b.world.profileCount(), plan.perProfile(), plan.describe(), floorWorkers)
	if len(plan.owned) > 0 {
		b.progress.logf("floor: then %s", describeOwned(plan.owned))
	}
	stopLoad := func() {}
	if load > 0 {
		b.progress.logf("floor: beside a busy loop taking %.2f of a core", load)
		stopLoad = startBusyLoop(ctx, load)
	}
	took, cpu, profiles, err := b.sendFloorWrites(ctx, f)
	stopLoad()
	if err != nil {
		return nil, err
	}
	requests := plan.total()
	res := &floorResult{Seconds: took.Seconds(), Requests: requests, RequestsPerSecond: float64(requests) / took.Seconds(),
		Writes: plan.describe(), Owned: plan.owned, CPUSeconds: cpu, Load: load,
		APIServerProfileWrites: profiles.writes, APIServerStorageWrites: profiles.storageWrites}
	b.progress.logf("floor: %d requests in %s (%.0f/s); CPU %s", requests, formatDuration(took), res.RequestsPerSecond, cpu)
	if load == 0 {
		if res.Propagation, err = b.propagationFloor(ctx, f); err != nil {
			return nil, err
		}
	}
	if p := res.Propagation; p != nil {
		b.progress.logf("floor: a condition change to every namespace's profile of a cluster, p50 %.0fms, p99 %.0fms", p.P50Millis, p.P99Millis)
	}
	if err := b.deleteFloorObjects(ctx, namespaces); err != nil {
		return res, err
	}
	return res, b.compactEtcd(ctx)
}

// compactEtcd leaves etcd after the floor as the floor found it: without
// the history of the floor's deleted objects (etcdGateway.compactAndDefragment).
func (b *bench) compactEtcd(ctx context.Context) error {
	done, err := newEtcdGateway(b.env.EtcdURL()).compactAndDefragment(ctx)
	if err != nil {
		return fmt.Errorf("compacting etcd after the floor: %w", err)
	}
	b.progress.logf("floor: etcd compacted and defragmented in %s, its database %d MiB → %d MiB",
		formatDuration(done.took), done.dbBefore>>20, done.dbAfter>>20)
	return nil
}

// sendFloorWrites sends the floor's writes and returns how long they took,
// the CPU each process spent and the API server's profile counters
// meanwhile.
func (b *bench) sendFloorWrites(ctx context.Context, f *floorWriter) (time.Duration, cpuUse, profileCounts, error) {
	before, err := b.apiServer.profileCounts(ctx)
	if err != nil {
		return 0, nil, profileCounts{}, err
	}
	n, m := len(b.world.clusters), len(f.namespaces)
	cpuBefore := b.cpuNow(nil)
	start := time.Now()
	stopTicker := b.tickEvery(5*time.Second, func() { b.progress.logf("floor: running for %s", formatDuration(time.Since(start))) })
	// Cluster-major order, as the mirror reconciles a cluster at a time and
	// writes its profiles in every namespace.
	err = forEach(ctx, floorWorkers, n*m, func(ctx context.Context, i int) error {
		return f.publish(ctx, i%m, i/m)
	})
	if err == nil {
		err = forEach(ctx, floorWorkers, len(f.slices), func(ctx context.Context, i int) error {
			return f.applySlice(ctx, f.slices[i])
		})
	}
	took := time.Since(start)
	cpu := b.cpuNow(nil).minus(cpuBefore)
	stopTicker()
	if err != nil {
		return 0, nil, profileCounts{}, err
	}
	after, err := b.apiServer.profileCounts(ctx)
	return took, cpu, after.minus(before), err
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

// floorSlices creates a Placement in every floor namespace, as the world
// has in every bench namespace, and returns the slices the placement
// decisions write for them; none without the gate.
func (b *bench) floorSlices(ctx context.Context, namespaces []string) ([]*cpv1alpha1.PlacementDecision, error) {
	if !b.cfg.gates["placementdecision"] {
		return nil, nil
	}
	var slices []*cpv1alpha1.PlacementDecision
	for i, ns := range namespaces {
		p, err := createPlacement(ctx, b.setup, ns, len(b.world.clusters))
		if err != nil {
			return nil, err
		}
		slices = append(slices, b.world.owned.slices(p, b.world.owned.decisions[i])...)
	}
	return slices, nil
}

// floorWrites are the writes the floor sends for the run's capabilities.
type floorWrites struct {
	// providers and copies are each profile's writes beyond the mirror's
	// metadata and status applies: a status apply per access provider, a
	// create per token copy.
	providers, copies, profiles int
	// owned are, by gate, the writes of the objects the capabilities own:
	// one per object.
	owned ownedWrites
}

func (w *world) floorWrites() floorWrites {
	f := floorWrites{copies: w.bundle.msas, profiles: w.profileCount(), owned: ownedWrites{}}
	for _, provider := range []string{"proxy", "direct"} {
		if w.bundle.gates[provider] {
			f.providers++
		}
	}
	for _, k := range w.owned.ownedKindsOn() {
		f.owned[k.gate] = w.owned.objects(k.gate, len(w.clusters), len(w.namespaces))
	}
	return f
}

// perProfile is how many writes each profile takes.
func (f floorWrites) perProfile() int { return 2 + f.providers + f.copies }

// total is every request the floor sends.
func (f floorWrites) total() int {
	n := f.perProfile() * f.profiles
	for _, writes := range f.owned {
		n += writes
	}
	return n
}

// describe says which writes each profile takes.
func (f floorWrites) describe() string {
	out := "mirror metadata + status"
	if f.providers > 0 {
		out += fmt.Sprintf(", %d access provider status", f.providers)
	}
	if f.copies > 0 {
		out += fmt.Sprintf(", %d token copy create", f.copies)
	}
	return out
}

// floorWriter sends the floor's writes for one profile at a time.
type floorWriter struct {
	world  *world
	client client.Client
	// writers[0] is the mirror's; the rest are the access providers'.
	writers    []*clusterprofile.Writer
	namespaces []string
	slices     []*cpv1alpha1.PlacementDecision
}

// publish writes cluster i's profile in the j-th floor namespace and what
// the other capabilities add to it.
func (f *floorWriter) publish(ctx context.Context, j, i int) error {
	namespace, cluster := f.namespaces[j], f.world.clusters[i]
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
	if j == f.world.owned.multiKueue {
		mk := multikueue.DesiredCluster(cluster.Name, true, f.world.owned.managerName)
		if err := ssa.Apply(ctx, f.client, mk.DeepCopy(), mk.Object, floorFieldManager+"-multikueue"); err != nil {
			return fmt.Errorf("applying MultiKueueCluster %s: %w", cluster.Name, err)
		}
	}
	if j == f.world.owned.argoCD {
		s := f.world.argoCDSecret(namespace, cluster, profile.UID)
		if err := f.client.Create(ctx, s, client.FieldOwner(floorFieldManager+"-argocd")); err != nil {
			return fmt.Errorf("creating Argo CD cluster Secret %s: %w", client.ObjectKeyFromObject(s), err)
		}
	}
	return nil
}

// applySlice applies a slice as the placement decisions do: only what they
// own of it.
func (f *floorWriter) applySlice(ctx context.Context, s *cpv1alpha1.PlacementDecision) error {
	body := map[string]any{
		"apiVersion": s.APIVersion, "kind": s.Kind,
		"metadata":  map[string]any{"name": s.Name, "namespace": s.Namespace, "labels": s.Labels, "ownerReferences": s.OwnerReferences},
		"decisions": s.Decisions, "schedulerName": s.SchedulerName,
	}
	if err := ssa.Apply(ctx, f.client, s.DeepCopy(), body, floorFieldManager+"-placementdecision"); err != nil {
		return fmt.Errorf("applying PlacementDecision %s: %w", client.ObjectKeyFromObject(s), err)
	}
	return nil
}

// deleteFloorObjects removes the floor's objects before the manager
// starts: it would otherwise delete them itself (they carry its manager
// name) and its cache would hold them; the floor's MultiKueueClusters hold
// the names the manager's take.
func (b *bench) deleteFloorObjects(ctx context.Context, namespaces []string) error {
	start := time.Now()
	kinds := []client.Object{&corev1.Secret{}, &cpv1alpha1.ClusterProfile{}}
	if b.cfg.gates["placementdecision"] {
		kinds = append(kinds, &cpv1alpha1.PlacementDecision{}, &clusterv1beta1.Placement{})
	}
	err := forEach(ctx, len(namespaces), len(namespaces), func(ctx context.Context, i int) error {
		for _, kind := range kinds {
			if err := b.deleteAllOf(ctx, kind, namespaces[i]); err != nil {
				return fmt.Errorf("deleting the floor's %T in %s: %w", kind, namespaces[i], err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := b.checkGone(ctx, &cpv1alpha1.ClusterProfileList{}, client.InNamespace(ns)); err != nil {
			return err
		}
	}
	if b.cfg.gates["multikueue"] {
		if err := b.deleteAllOf(ctx, newMultiKueueCluster(), ""); err != nil {
			return fmt.Errorf("deleting the floor's MultiKueueClusters: %w", err)
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(multikueue.GroupVersion.WithKind(multikueue.ClusterKind.Kind + "List"))
		if err := b.checkGone(ctx, list); err != nil {
			return err
		}
	}
	b.progress.logf("floor: its objects deleted in %s", formatDuration(time.Since(start)))
	return nil
}

// checkGone fails when a list of the floor's objects still holds one.
func (b *bench) checkGone(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := b.setup.List(ctx, list, append(opts, client.Limit(1))...); err != nil {
		return fmt.Errorf("checking the floor's objects (%T) are gone: %w", list, err)
	}
	if meta.LenList(list) > 0 {
		return fmt.Errorf("floor objects (%T) left after DeleteAllOf", list)
	}
	return nil
}

// newMultiKueueCluster is an empty MultiKueueCluster, for its kind.
func newMultiKueueCluster() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(multikueue.ClusterKind)
	return u
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
