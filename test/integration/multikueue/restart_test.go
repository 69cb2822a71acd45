package multikueue_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestARestartQueuesOneKeyPerProfileInKueuesNamespace: a restarted
// manager's MultiKueue controller queues one key per profile in Kueue's
// namespace (and per MultiKueueCluster), not one per profile on the hub,
// though every cluster, set and binding hands it an event at a start; the
// resync writes nothing.
func TestARestartQueuesOneKeyPerProfileInKueuesNamespace(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	opts := framework.ManagerOptions{Gates: gates, MultiKueue: multikueue.Options{Namespace: "rs-kueue", ConfigName: "rs-fleet"}}
	stop := framework.StartManager(t, env, opts)
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("rs-set").Obj())
	for _, name := range []string{"rs-c1", "rs-c2", "rs-c3"} {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(name).ClusterSet("rs-set").Obj())
	}
	for _, ns := range []string{"rs-kueue", "rs-a", "rs-b", "rs-c"} {
		framework.CreateNamespace(ctx, t, c, ns)
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, "rs-set").Bound(true).Obj())
	}
	expectKueueObjects(t, ctx, "MultiKueueCluster", "rs-", map[string]kueueView{
		"rs-c1": ours("rs-c1"), "rs-c2": ours("rs-c2"), "rs-c3": ours("rs-c3")})
	NewWithT(t).Eventually(func() int { return len(framework.ProfileNames(ctx, t, env.Client)) }, framework.Timeout, framework.Interval).
		Should(BeNumerically(">=", 12), "the profiles in the four namespaces")
	stop()

	before := framework.KeysQueued(t, multikueue.ControllerName)
	versions := clusterVersions(ctx, t)
	framework.StartManager(t, env, opts)

	// The hub holds other tests' MultiKueueClusters too; each maps to its
	// name in Kueue's namespace.
	keys := framework.ProfileNames(ctx, t, env.Client, client.InNamespace("rs-kueue")).Union(sets.KeySet(versions))
	if all := framework.ProfileNames(ctx, t, env.Client); all.Len() <= keys.Len() {
		t.Fatalf("the hub holds %d profiles, Kueue's namespace and the MultiKueueClusters %d keys: nothing to tell apart", all.Len(), keys.Len())
	}
	framework.ExpectKeysQueued(t, before, map[string]float64{multikueue.ControllerName: float64(keys.Len())})
	NewWithT(t).Expect(clusterVersions(ctx, t)).To(Equal(versions), "MultiKueueClusters written by the restart")
}

// clusterVersions is every MultiKueueCluster's resourceVersion, by its key
// in Kueue's namespace (rs-kueue/name).
func clusterVersions(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(multikueue.GroupVersion.WithKind("MultiKueueClusterList"))
	if err := env.Client.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, item := range list.Items {
		out["rs-kueue/"+item.GetName()] = item.GetResourceVersion()
	}
	return out
}
