package capability_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestClusterWideIndexesAnswerTheCachesLists: an index registered with
// fieldindex.ClusterWide answers controller-runtime's cached List by field
// across namespaces (it writes the cache reader's own key format; this
// fails if that format changes), with one key per object.
func TestClusterWideIndexesAnswerTheCachesLists(t *testing.T) {
	ctx := framework.ContextFor(t)
	for _, ns := range []string{"index-a", "index-b"} {
		framework.CreateNamespace(ctx, t, env.Client, ns)
	}
	for _, cm := range []struct{ namespace, name, group string }{
		{"index-a", "one", "red"}, {"index-b", "two", "red"}, {"index-b", "three", "blue"},
	} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.namespace, Name: cm.name},
			Data: map[string]string{"group": cm.group}}
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	mgr, _ := newManager(t, "")
	byGroup := func(obj client.Object) []string {
		if group, ok := obj.(*corev1.ConfigMap).Data["group"]; ok {
			return []string{group}
		}
		return nil // such as every namespace's kube-root-ca.crt
	}
	if err := fieldindex.ClusterWide(ctx, mgr.GetCache(), &corev1.ConfigMap{}, "data.group", byGroup); err != nil {
		t.Fatal(err)
	}
	start(t, mgr)
	syncCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("the cache did not sync")
	}

	list := &corev1.ConfigMapList{}
	if err := mgr.GetCache().List(ctx, list, client.MatchingFields{"data.group": "red"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range list.Items {
		got = append(got, cm.Namespace+"/"+cm.Name)
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"index-a/one", "index-b/two"}, got); diff != "" {
		t.Errorf("ConfigMaps of group red (-want +got):\n%s", diff)
	}
	informer, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	keys := informer.(toolscache.SharedIndexInformer).GetIndexer().ListIndexFuncValues("field:data.group")
	sort.Strings(keys)
	if diff := cmp.Diff([]string{"__all_namespaces/blue", "__all_namespaces/red"}, keys); diff != "" {
		t.Errorf("index keys (-want +got):\n%s", diff)
	}
}
