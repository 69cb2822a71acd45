package membership_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	. "open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func clusterNamespace(name, cluster string) *corev1.Namespace {
	ns := utiltesting.NamespaceObj(name)
	ns.Labels = map[string]string{LabelClusterNamespace: cluster}
	return ns
}

// TestReaderNamespaceStates reads namespace metadata through a fake client
// with the production indexes: a namespace labelled as a ManagedCluster's
// own never serves, whatever binds there.
func TestReaderNamespaceStates(t *testing.T) {
	now := metav1.Now()
	terminatingClusterNS := clusterNamespace("old-c9", "old-c9")
	terminatingClusterNS.DeletionTimestamp = &now
	terminatingClusterNS.Finalizers = []string{"kubernetes"}
	objects := []client.Object{
		utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
		utiltesting.MakeClusterSet("dev").Obj(),
		utiltesting.NamespaceObj("team"),
		clusterNamespace("c2", "c2"),
		clusterNamespace("odd", "someone-else"),
		terminatingClusterNS,
	}
	for _, ns := range []string{"team", "c2", "odd", "old-c9", "missing"} {
		objects = append(objects, utiltesting.MakeBinding(ns, "dev").Bound(true).Obj())
	}
	reader := Reader{Client: fakeclient.New(objects...)}
	ctx := context.Background()

	cluster, err := reader.Cluster(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	world, err := reader.ClusterPublishing(ctx, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantStates := map[string]NamespaceState{"team": NamespaceActive, "c2": NamespaceOfCluster, "odd": NamespaceOfCluster,
		"old-c9": NamespaceTerminating, "missing": NamespaceMissing}
	if diff := cmp.Diff(wantStates, world.Namespaces); diff != "" {
		t.Errorf("namespace states (-want +got):\n%s", diff)
	}

	gotServes := map[string]bool{}
	for ns := range wantStates {
		if gotServes[ns], err = reader.Serves(ctx, ns, "c1"); err != nil {
			t.Fatal(err)
		}
	}
	wantServes := map[string]bool{"team": true, "c2": false, "odd": false, "old-c9": false, "missing": false}
	if diff := cmp.Diff(wantServes, gotServes); diff != "" {
		t.Errorf("Serves (-want +got):\n%s", diff)
	}
}

func TestLifecycleChanged(t *testing.T) {
	now := metav1.Now()
	terminating := utiltesting.NamespaceObj("team")
	terminating.DeletionTimestamp = &now
	relabelled := utiltesting.NamespaceObj("team")
	relabelled.Labels = map[string]string{"owner": "someone"}
	cases := map[string]struct {
		old, new *corev1.Namespace
		want     bool
	}{
		"termination starts":                   {old: utiltesting.NamespaceObj("team"), new: terminating, want: true},
		"labelled as a cluster's namespace":    {old: utiltesting.NamespaceObj("c2"), new: clusterNamespace("c2", "c2"), want: true},
		"no longer a cluster's namespace":      {old: clusterNamespace("c2", "c2"), new: utiltesting.NamespaceObj("c2"), want: true},
		"the cluster-name label changes value": {old: clusterNamespace("c2", "c2"), new: clusterNamespace("c2", "c3")},
		"another label changes":                {old: utiltesting.NamespaceObj("team"), new: relabelled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := LifecycleChanged().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("LifecycleChanged passes the update: %v, want %v", got, tc.want)
			}
		})
	}
}
