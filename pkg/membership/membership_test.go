package membership_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	. "open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func clusterSets(s ...*clusterv1beta2.ManagedClusterSet) []clusterv1beta2.ManagedClusterSet {
	out := make([]clusterv1beta2.ManagedClusterSet, 0, len(s))
	for _, set := range s {
		out = append(out, *set)
	}
	return out
}

func bindings(b ...*clusterv1beta2.ManagedClusterSetBinding) []clusterv1beta2.ManagedClusterSetBinding {
	out := make([]clusterv1beta2.ManagedClusterSetBinding, 0, len(b))
	for _, binding := range b {
		out = append(out, *binding)
	}
	return out
}

func active(names ...string) map[string]NamespaceState {
	out := map[string]NamespaceState{}
	for _, n := range names {
		out[n] = NamespaceActive
	}
	return out
}

func TestServed(t *testing.T) {
	now := metav1.Now()
	deletingSet := utiltesting.MakeClusterSet("dev").Obj()
	deletingSet.DeletionTimestamp = &now
	deletingCluster := utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj()
	deletingCluster.DeletionTimestamp = &now
	badSelector := utiltesting.MakeClusterSet("bad").Obj()
	badSelector.Spec.ClusterSelector.SelectorType = "Nonsense"
	deletingBinding := utiltesting.MakeBinding("a", "dev").Bound(true).Obj()
	deletingBinding.DeletionTimestamp = &now
	deletingBinding.Finalizers = []string{"test"}

	cases := map[string]struct {
		cluster *clusterv1.ManagedCluster
		world   Publishing
		want    map[string]string
	}{
		"exclusive set bound in two namespaces": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "dev").Bound(true).Obj(), utiltesting.MakeBinding("b", "dev").Bound(true).Obj()),
				Namespaces: active("a", "b"),
			},
			want: map[string]string{"a": "dev", "b": "dev"},
		},
		"binding not bound": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "dev").Bound(false).Obj(), utiltesting.MakeBinding("b", "dev").Obj()),
				Namespaces: active("a", "b"),
			},
			want: map[string]string{},
		},
		"terminating and missing namespaces get nothing": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "dev").Bound(true).Obj(), utiltesting.MakeBinding("gone", "dev").Bound(true).Obj()),
				Namespaces: map[string]NamespaceState{"a": NamespaceTerminating},
			},
			want: map[string]string{},
		},
		"cluster outside the set": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("prod").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "dev").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{},
		},
		"empty label selector is the global set": {
			cluster: utiltesting.MakeManagedCluster("c1").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("global").Selector(metav1.LabelSelector{}).Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "global").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{"a": "global"},
		},
		"match expressions": {
			cluster: utiltesting.MakeManagedCluster("c1").Label("env", "prod").Obj(),
			world: Publishing{
				Sets: clusterSets(utiltesting.MakeClusterSet("prodlike").Selector(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"dev"}}}}).Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "prodlike").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{"a": "prodlike"},
		},
		"several sets in one namespace: the cluster's exclusive set names the profile": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("zeta").Obj(),
			world: Publishing{
				Sets: clusterSets(utiltesting.MakeClusterSet("zeta").Obj(), utiltesting.MakeClusterSet("alpha").Selector(metav1.LabelSelector{}).Obj()),
				Bindings: bindings(utiltesting.MakeBinding("a", "zeta").Bound(true).Obj(), utiltesting.MakeBinding("a", "alpha").Bound(true).Obj(),
					utiltesting.MakeBinding("b", "alpha").Bound(true).Obj()),
				Namespaces: active("a", "b"),
			},
			want: map[string]string{"a": "zeta", "b": "alpha"},
		},
		"several label-selector sets: the first by name": {
			cluster: utiltesting.MakeManagedCluster("c1").Obj(),
			world: Publishing{
				Sets: clusterSets(utiltesting.MakeClusterSet("mid").Selector(metav1.LabelSelector{}).Obj(),
					utiltesting.MakeClusterSet("first").Selector(metav1.LabelSelector{}).Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "mid").Bound(true).Obj(), utiltesting.MakeBinding("a", "first").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{"a": "first"},
		},
		"set being deleted and set with a broken selector pick nothing": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(deletingSet, badSelector),
				Bindings:   bindings(utiltesting.MakeBinding("a", "dev").Bound(true).Obj(), utiltesting.MakeBinding("a", "bad").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{},
		},
		"cluster being deleted": {
			cluster: deletingCluster,
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("a", "dev").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{},
		},
		"a binding that opts out of publishing serves Placement only": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets: clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings: bindings(utiltesting.MakeBinding("a", "dev").Bound(true).Annotation(AnnotationPublish, "false").Obj(),
					utiltesting.MakeBinding("b", "dev").Bound(true).Annotation(AnnotationPublish, "true").Obj()),
				Namespaces: active("a", "b"),
			},
			want: map[string]string{"b": "dev"},
		},
		"an opted-out binding does not hide another binding of the namespace": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets: clusterSets(utiltesting.MakeClusterSet("dev").Obj(), utiltesting.MakeClusterSet("global").Selector(metav1.LabelSelector{}).Obj()),
				Bindings: bindings(utiltesting.MakeBinding("a", "global").Bound(true).Annotation(AnnotationPublish, "false").Obj(),
					utiltesting.MakeBinding("a", "dev").Bound(true).Obj()),
				Namespaces: active("a"),
			},
			want: map[string]string{"a": "dev"},
		},
		"a binding being deleted": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(deletingBinding),
				Namespaces: active("a"),
			},
			want: map[string]string{},
		},
		"a set whose name is no label value gives way to one whose is": {
			cluster: utiltesting.MakeManagedCluster("c1").Obj(),
			world: Publishing{
				Sets: clusterSets(utiltesting.MakeClusterSet("a-"+strings.Repeat("x", 70)).Selector(metav1.LabelSelector{}).Obj(),
					utiltesting.MakeClusterSet("z-global").Selector(metav1.LabelSelector{}).Obj()),
				Bindings: bindings(utiltesting.MakeBinding("a", "a-"+strings.Repeat("x", 70)).Bound(true).Obj(),
					utiltesting.MakeBinding("a", "z-global").Bound(true).Obj(),
					utiltesting.MakeBinding("b", "a-"+strings.Repeat("x", 70)).Bound(true).Obj()),
				Namespaces: active("a", "b"),
			},
			// b has no other set: the profile is published, its set label is left off (the mirror's rule).
			want: map[string]string{"a": "z-global", "b": "a-" + strings.Repeat("x", 70)},
		},
		"a ManagedCluster's namespace serves nothing; another namespace of the same set does": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("c2", "dev").Bound(true).Obj(), utiltesting.MakeBinding("a", "dev").Bound(true).Obj()),
				Namespaces: map[string]NamespaceState{"c2": NamespaceOfCluster, "a": NamespaceActive},
			},
			want: map[string]string{"a": "dev"},
		},
		"not even the cluster's own namespace serves it": {
			cluster: utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
			world: Publishing{
				Sets:       clusterSets(utiltesting.MakeClusterSet("dev").Obj()),
				Bindings:   bindings(utiltesting.MakeBinding("c1", "dev").Bound(true).Obj()),
				Namespaces: map[string]NamespaceState{"c1": NamespaceOfCluster},
			},
			want: map[string]string{},
		},
		"cluster gone": {
			world: Publishing{Namespaces: active("a")},
			want:  map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Served(tc.cluster, tc.world)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
			for _, ns := range append(slices.Collect(maps.Keys(tc.world.Namespaces)), "elsewhere") {
				if _, want := tc.want[ns]; ServedIn(tc.cluster, tc.world, ns) != want {
					t.Errorf("ServedIn(%q) = %t, want %t", ns, !want, want)
				}
			}
		})
	}
}

func TestBindingsInClusterNamespaces(t *testing.T) {
	now := metav1.Now()
	deleting := utiltesting.MakeBinding("c2", "deleting").Bound(true).Obj()
	deleting.DeletionTimestamp = &now
	cases := map[string]struct {
		world Publishing
		want  []string
	}{
		"publishing bindings in a ManagedCluster's namespace": {
			world: Publishing{
				Bindings: bindings(utiltesting.MakeBinding("c2", "dev").Bound(true).Obj(), utiltesting.MakeBinding("c2", "global").Bound(true).Obj(),
					utiltesting.MakeBinding("team", "dev").Bound(true).Obj()),
				Namespaces: map[string]NamespaceState{"c2": NamespaceOfCluster, "team": NamespaceActive},
			},
			want: []string{"c2/dev", "c2/global"},
		},
		"bindings that publish nothing anyway are not listed": {
			world: Publishing{
				Bindings: bindings(utiltesting.MakeBinding("c2", "unbound").Bound(false).Obj(),
					utiltesting.MakeBinding("c2", "optout").Bound(true).Annotation(AnnotationPublish, "false").Obj(), deleting),
				Namespaces: map[string]NamespaceState{"c2": NamespaceOfCluster},
			},
		},
		"terminating and missing namespaces are not a cluster's": {
			world: Publishing{
				Bindings:   bindings(utiltesting.MakeBinding("old", "dev").Bound(true).Obj(), utiltesting.MakeBinding("gone", "dev").Bound(true).Obj()),
				Namespaces: map[string]NamespaceState{"old": NamespaceTerminating},
			},
		},
		"empty world": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, b := range BindingsInClusterNamespaces(tc.world) {
				got = append(got, b.Namespace+"/"+b.Spec.ClusterSet)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}
