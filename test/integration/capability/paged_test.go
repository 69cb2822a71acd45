package capability_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// listCounter is an API reader that counts the lists it passes on.
type listCounter struct {
	client.Reader
	lists int
}

func (r *listCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.lists++
	return r.Reader.List(ctx, list, opts...)
}

// TestTeardownsPageThroughLargeLists: a teardown over more objects than a
// page lists them a page at a time, visits each once, counts only what it
// changed and carries on past an item it cannot change.
func TestTeardownsPageThroughLargeLists(t *testing.T) {
	ctx := framework.ContextFor(t)
	const namespace, total = "paged-ns", 2*capability.TeardownPage + 1
	framework.CreateNamespace(ctx, t, env.Client, namespace)
	for i := range total {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("cm-%04d", i),
			Labels: map[string]string{"paged": "true"}}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	reader := &listCounter{Reader: env.Client}
	visited := map[string]int{}
	changed, err := capability.EachListed(ctx, reader, &corev1.ConfigMapList{}, func(_ context.Context, obj client.Object) (bool, error) {
		visited[obj.GetName()]++
		switch obj.GetName() {
		case "cm-0000":
			return false, fmt.Errorf("cannot change %s", obj.GetName())
		case "cm-0001":
			return false, nil
		}
		return true, nil
	}, client.InNamespace(namespace), client.MatchingLabels{"paged": "true"})

	if err == nil || err.Error() != "cannot change cm-0000" {
		t.Errorf("error = %v, want the one item's error", err)
	}
	got := struct{ Changed, Lists, Visited, VisitedTwice int }{Changed: changed, Lists: reader.lists, Visited: len(visited)}
	for _, n := range visited {
		if n > 1 {
			got.VisitedTwice++
		}
	}
	want := struct{ Changed, Lists, Visited, VisitedTwice int }{Changed: total - 2, Lists: 3, Visited: total}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paging (-want +got):\n%s", diff)
	}
}
