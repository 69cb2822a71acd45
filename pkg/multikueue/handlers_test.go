package multikueue

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func TestEventsMapToKeys(t *testing.T) {
	r := NewReconciler(nil, Readers{}, nil, Options{ManagerName: testManager, Namespace: "kueue"})
	config := NewConfigReconciler(nil, Readers{}, nil, Options{ConfigName: "fleet"})
	cases := map[string]struct {
		mapFunc func(context.Context, client.Object) []reconcile.Request
		obj     client.Object
		want    []reconcile.Request
	}{
		"a MultiKueueCluster: the profile of its name in Kueue's namespace": {
			mapFunc: r.profileOfCluster, obj: DesiredCluster("c1", true, testManager),
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "kueue", Name: "c1"}}},
		},
		"no object":              {mapFunc: r.profileOfCluster},
		"an object with no name": {mapFunc: r.profileOfCluster, obj: newUnstructured(ClusterKind)},
		"anything: the one config": {
			mapFunc: config.config, obj: DesiredCluster("c1", true, testManager),
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "fleet"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.mapFunc(context.Background(), tc.obj)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOnlyProfilesInKueuesNamespaceAreWatched(t *testing.T) {
	r := NewReconciler(nil, Readers{}, nil, Options{ManagerName: testManager})
	got := map[string]bool{
		"kueue-system": r.inKueueNamespace(utiltesting.MakeClusterProfile("kueue-system", "c1", testManager).Obj()),
		"argocd":       r.inKueueNamespace(utiltesting.MakeClusterProfile("argocd", "c1", testManager).Obj()),
	}
	if diff := cmp.Diff(map[string]bool{"kueue-system": true, "argocd": false}, got); diff != "" {
		t.Errorf("watched (-want +got):\n%s", diff)
	}
}
