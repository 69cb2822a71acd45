package mirror

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/tools/events"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// barrier lets no profile's first write through until every profile has
// started one, and fails a write that waited longer than patience: a
// reconcile that writes a cluster's profiles one at a time never gets past
// its first.
type barrier struct {
	mu       sync.Mutex
	arrived  map[string]bool
	want     int
	all      chan struct{}
	patience time.Duration
}

func (b *barrier) wait(obj client.Object) error {
	if _, ok := obj.(*cpv1alpha1.ClusterProfile); !ok {
		return nil
	}
	key := obj.GetNamespace() + "/" + obj.GetName()
	b.mu.Lock()
	if b.arrived[key] {
		b.mu.Unlock()
		return nil
	}
	b.arrived[key] = true
	if len(b.arrived) == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-time.After(b.patience):
		return fmt.Errorf("%s was written while the cluster's other profiles waited", key)
	}
}

// TestAClustersProfilesAreWrittenAtOnce: one reconcile writes the profiles
// of a cluster in every namespace side by side, so that a change reaches
// all of them in about the time of one write.
func TestAClustersProfilesAreWrittenAtOnce(t *testing.T) {
	namespaces := []string{"team-a", "team-b", "team-c", "team-d"}
	objects := []client.Object{utiltesting.MakeClusterSet("dev").Obj(),
		utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Version("v1.31.0").Joined().Obj()}
	for _, ns := range namespaces {
		objects = append(objects, utiltesting.NamespaceObj(ns), utiltesting.MakeBinding(ns, "dev").Bound(true).Obj())
	}
	b := &barrier{arrived: map[string]bool{}, want: len(namespaces), all: make(chan struct{}), patience: 5 * time.Second}
	c := withMirrorIndexes(fakeclient.Builder(objects...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := b.wait(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := b.wait(obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}))
	r := NewReconciler(c, c, events.NewFakeRecorder(10), Options{ManagerName: testManager, Namespace: DefaultNamespace})

	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "c1"}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	var got []string
	for key := range profilesOf(t, c) {
		got = append(got, key)
	}
	want := []string{"team-a/c1", "team-b/c1", "team-c/c1", "team-d/c1"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
}

// TestTheMirrorsWritesInFlightAreBoundedByItsWorkers: however many profiles
// its reconciles write side by side, the mirror has no more writes in
// flight than it has workers, as when each reconcile wrote one at a time.
func TestTheMirrorsWritesInFlightAreBoundedByItsWorkers(t *testing.T) {
	objects := []client.Object{utiltesting.MakeClusterSet("dev").Obj()}
	for _, cluster := range []string{"c1", "c2"} {
		objects = append(objects, utiltesting.MakeManagedCluster(cluster).ClusterSet("dev").Version("v1.31.0").Joined().Obj())
	}
	for _, ns := range []string{"team-a", "team-b", "team-c", "team-d", "team-e", "team-f"} {
		objects = append(objects, utiltesting.NamespaceObj(ns), utiltesting.MakeBinding(ns, "dev").Bound(true).Obj())
	}
	var mu sync.Mutex
	inFlight, most := 0, 0
	count := func() func() {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		return func() { mu.Lock(); inFlight--; mu.Unlock() }
	}
	c := withMirrorIndexes(fakeclient.Builder(objects...).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			defer count()()
			return c.Patch(ctx, obj, patch, opts...)
		},
	}))
	const workers = 3
	r := NewReconciler(c, c, events.NewFakeRecorder(100), Options{ManagerName: testManager, Namespace: DefaultNamespace, Workers: workers})

	var reconciles sync.WaitGroup
	for _, cluster := range []string{"c1", "c2"} {
		reconciles.Go(func() {
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: cluster}}); err != nil {
				t.Errorf("Reconcile %s: %v", cluster, err)
			}
		})
	}
	reconciles.Wait()
	if len(profilesOf(t, c)) != 12 {
		t.Fatalf("profiles = %d, want 12", len(profilesOf(t, c)))
	}
	if most != workers {
		t.Errorf("most writes in flight = %d, want %d (the workers)", most, workers)
	}
}
