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
