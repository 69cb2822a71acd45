package membership_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	. "open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// TestProfileMapperKeys: with NameKeys, an event that reaches several
// namespaces (every profile, a cluster's profiles, a set's) queues one name
// key per cluster (every profile: every ManagedCluster, with profiles or
// not); one that reaches a single namespace (a binding) keeps its
// profile keys, as does every event without NameKeys. With Namespace, every
// event reaches the profiles of that namespace only, and an event about
// another namespace none.
func TestProfileMapperKeys(t *testing.T) {
	objects := []client.Object{
		utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
		utiltesting.MakeManagedCluster("c2").ClusterSet("dev").Obj(),
		utiltesting.MakeManagedCluster("c3").Obj(),
		utiltesting.MakeClusterSet("dev").Obj(),
		utiltesting.MakeBinding("team-a", "dev").Bound(true).Obj(),
		utiltesting.MakeBinding("team-b", "dev").Bound(true).Obj(),
	}
	for _, ns := range []string{"team-a", "team-b"} {
		for _, cluster := range []string{"c1", "c2"} {
			objects = append(objects, utiltesting.MakeClusterProfile(ns, cluster, "open-cluster-management").Obj())
		}
	}
	c := fakeclient.New(objects...)
	profile := func(ns, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	}
	every := []reconcile.Request{profile("team-a", "c1"), profile("team-a", "c2"), profile("team-b", "c1"), profile("team-b", "c2")}
	events := map[string]func(ProfileMapper) []reconcile.Request{
		"every profile": func(m ProfileMapper) []reconcile.Request { return m.All(context.Background(), nil) },
		"a cluster": func(m ProfileMapper) []reconcile.Request {
			return m.OfCluster(context.Background(), utiltesting.MakeManagedCluster("c1").Obj())
		},
		"a set": func(m ProfileMapper) []reconcile.Request {
			return m.OfSet(context.Background(), utiltesting.MakeClusterSet("dev").Obj())
		},
		"a binding": func(m ProfileMapper) []reconcile.Request {
			return m.OfBinding(context.Background(), utiltesting.MakeBinding("team-a", "dev").Obj())
		},
		"another binding": func(m ProfileMapper) []reconcile.Request {
			return m.OfBinding(context.Background(), utiltesting.MakeBinding("team-b", "dev").Obj())
		},
		"a namespace": func(m ProfileMapper) []reconcile.Request {
			return m.OfNamespace(context.Background(), utiltesting.NamespaceObj("team-a"))
		},
	}
	teamA := []reconcile.Request{profile("team-a", "c1"), profile("team-a", "c2")}
	teamB := []reconcile.Request{profile("team-b", "c1"), profile("team-b", "c2")}
	tests := map[string]struct {
		nameKeys  bool
		namespace string
		want      map[string][]reconcile.Request
	}{
		"profile keys": {want: map[string][]reconcile.Request{
			"every profile": every, "a cluster": {profile("team-a", "c1"), profile("team-b", "c1")},
			"a set": every, "a binding": teamA, "another binding": teamB, "a namespace": teamA,
		}},
		"name keys": {nameKeys: true, want: map[string][]reconcile.Request{
			"every profile": {namekeys.Key("c1"), namekeys.Key("c2"), namekeys.Key("c3")}, "a cluster": {namekeys.Key("c1")},
			"a set": {namekeys.Key("c1"), namekeys.Key("c2")}, "a binding": teamA, "another binding": teamB, "a namespace": teamA,
		}},
		"one namespace": {namespace: "team-a", want: map[string][]reconcile.Request{
			"every profile": teamA, "a cluster": {profile("team-a", "c1")},
			"a set": teamA, "a binding": teamA, "another binding": nil, "a namespace": teamA,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := ProfileMapper{Client: c, NameKeys: tc.nameKeys, Namespace: tc.namespace}
			got := map[string][]reconcile.Request{}
			for event, mapped := range events {
				got[event] = mapped(m)
			}
			byKey := cmpopts.SortSlices(func(a, b reconcile.Request) bool { return a.String() < b.String() })
			if diff := cmp.Diff(tc.want, got, byKey); diff != "" {
				t.Errorf("keys by event (-want +got):\n%s", diff)
			}
		})
	}
}
