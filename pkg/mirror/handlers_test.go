package mirror

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// The map functions are pure reads of the cache; a fake client with the
// same indexes stands in for it here (wiring is covered by the integration tests).
func newMapTestReconciler(objs ...client.Object) *Reconciler {
	return NewReconciler(newFakeClient(objs...), nil, nil, Options{ManagerName: testManager})
}

func names(requests []reconcile.Request) []string {
	out := make([]string, 0, len(requests))
	for _, r := range requests {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

// mapCase is an object and the clusters a map function must enqueue for it.
type mapCase struct {
	obj  client.Object
	want []string
}

// expectMaps runs mapFunc on each case's object and compares the clusters
// it enqueues.
func expectMaps(t *testing.T, mapFunc func(context.Context, client.Object) []reconcile.Request, cases map[string]mapCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(mapFunc(context.Background(), tc.obj))); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsMapToClusters(t *testing.T) {
	world := []client.Object{
		utiltesting.MakeManagedCluster("dev1").ClusterSet("dev").Obj(),
		utiltesting.MakeManagedCluster("dev2").ClusterSet("dev").Obj(),
		utiltesting.MakeManagedCluster("gpu1").Label("gpu", "yes").Obj(),
		utiltesting.MakeClusterSet("dev").Obj(),
		utiltesting.MakeClusterSet("gpu").Selector(metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "yes"}}).Obj(),
		utiltesting.MakeBinding("team", "dev").Bound(true).Obj(),
		utiltesting.MakeBinding("team", "missing-set").Bound(true).Obj(),
		// A profile of ours for a cluster that left the sets, and a foreign one.
		utiltesting.MakeClusterProfile("team", "former", testManager).Obj(),
		utiltesting.MakeClusterProfile("team", "foreign", "fleet").Obj(),
	}
	r := newMapTestReconciler(world...)
	ctx := context.Background()

	cases := map[string]struct {
		mapFunc func(context.Context, client.Object) []reconcile.Request
		obj     client.Object
		want    []string
	}{
		"set → its members": {
			mapFunc: r.clustersOfSet, obj: utiltesting.MakeClusterSet("gpu").Selector(metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "yes"}}).Obj(),
			want: []string{"gpu1"},
		},
		"exclusive set → its members": {
			mapFunc: r.clustersOfSet, obj: utiltesting.MakeClusterSet("dev").Obj(),
			want: []string{"dev1", "dev2"},
		},
		"set of the wrong type → nothing": {
			mapFunc: r.clustersOfSet, obj: &corev1.Namespace{},
			want: []string{},
		},
		"binding → its set's members and the clusters profiled in its namespace": {
			mapFunc: r.clustersOfBinding, obj: utiltesting.MakeBinding("team", "dev").Obj(),
			want: []string{"dev1", "dev2", "former"},
		},
		"binding of a missing set → the clusters profiled in its namespace": {
			mapFunc: r.clustersOfBinding, obj: utiltesting.MakeBinding("team", "missing-set").Obj(),
			want: []string{"former"},
		},
		"binding of the wrong type → nothing": {
			mapFunc: r.clustersOfBinding, obj: utiltesting.MakeClusterSet("dev").Obj(),
			want: []string{},
		},
		"namespace → clusters bound into it and profiled in it": {
			mapFunc: r.clustersOfNamespace, obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
			want: []string{"dev1", "dev2", "former"},
		},
		"empty namespace → nothing": {
			mapFunc: r.clustersOfNamespace, obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "empty"}},
			want: []string{},
		},
		"schema or coexistence change → every cluster": {
			mapFunc: r.allClusters, obj: nil,
			want: []string{"dev1", "dev2", "gpu1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(tc.mapFunc(ctx, tc.obj))); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}
