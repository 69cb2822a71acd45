package multikueue

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// newFakeClient is the shared fake client (production indexes) with Kueue's
// kinds known as unstructured, as the API server would serve them.
func newFakeClient(objs ...client.Object) client.Client {
	s := scheme.New()
	for _, gvk := range []struct{ kind, list string }{{"MultiKueueCluster", "MultiKueueClusterList"}, {"MultiKueueConfig", "MultiKueueConfigList"}} {
		s.AddKnownTypeWithName(GroupVersion.WithKind(gvk.kind), &unstructured.Unstructured{})
		s.AddKnownTypeWithName(GroupVersion.WithKind(gvk.list), &unstructured.UnstructuredList{})
	}
	return fakeclient.Builder(objs...).WithScheme(s).Build()
}

// kueueViews is every MultiKueueCluster by name: labels and spec.
func kueueViews(t *testing.T, c client.Client) map[string]map[string]any {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(GroupVersion.WithKind("MultiKueueClusterList"))
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, item := range list.Items {
		labels := map[string]any{}
		for k, v := range item.GetLabels() {
			labels[k] = v
		}
		out[item.GetName()] = map[string]any{"labels": labels, "spec": item.Object["spec"]}
	}
	return out
}

// TestReconcile runs Reconcile against a fake client carrying the
// production indexes, with a fake event recorder: want objects and events.
// (The fake client keeps no managedFields, so deleting ours, which checks
// our field manager first, is covered by test/integration/multikueue.)
func TestReconcile(t *testing.T) {
	world := func() []client.Object {
		return []client.Object{utiltesting.MakeClusterSet("dev").Obj(), utiltesting.NamespaceObj("kueue-system"),
			utiltesting.MakeBinding("kueue-system", "dev").Bound(true).Obj(),
			utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj()}
	}
	profile := func(manager string) client.Object {
		return utiltesting.MakeClusterProfile("kueue-system", "c1", manager).Obj()
	}
	oursView := map[string]any{"labels": map[string]any{LabelCreatedBy: testManager},
		"spec": map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": "c1"}}}}
	handWritten := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster", "metadata": map[string]any{"name": "c1"},
		"spec": map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{"location": "c1", "locationType": "Secret"}}}}}
	labelledOnly := DesiredCluster("c1", true, testManager)
	cases := map[string]struct {
		objects    []client.Object
		wantViews  map[string]map[string]any
		wantEvents []string
	}{
		"a published profile gets its MultiKueueCluster": {
			objects:   append(world(), profile(testManager)),
			wantViews: map[string]map[string]any{"c1": oursView},
		},
		"labelled as ours but never written by us: left alone": {
			objects:   append(world(), labelledOnly),
			wantViews: map[string]map[string]any{"c1": oursView},
		},
		"another manager's profile gets none": {
			objects:   append(world(), profile("fleet")),
			wantViews: map[string]map[string]any{},
		},
		"a hand-written MultiKueueCluster under the name is left alone and reported": {
			objects: append(world(), profile(testManager), handWritten),
			wantViews: map[string]map[string]any{"c1": {"labels": map[string]any{},
				"spec": handWritten.Object["spec"]}},
			wantEvents: []string{"Warning MultiKueueClusterNameClash MultiKueueCluster c1 exists and was not created for this ClusterProfile; leaving it alone"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := newFakeClient(tc.objects...)
			recorder := events.NewFakeRecorder(10)
			r := NewReconciler(c, Readers{Cache: c, API: c}, recorder, Options{ManagerName: testManager})
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kueue-system", Name: "c1"}}

			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			views := kueueViews(t, c)
			if diff := cmp.Diff(tc.wantViews, views); diff != "" {
				t.Errorf("MultiKueueClusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, utiltesting.DrainEvents(recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// A second reconcile of the same world writes and reports nothing.
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatalf("second Reconcile: %v", err)
			}
			if diff := cmp.Diff(views, kueueViews(t, c)); diff != "" {
				t.Errorf("the second reconcile changed objects (-first +second):\n%s", diff)
			}
			if got := utiltesting.DrainEvents(recorder); len(got) > 0 {
				t.Errorf("the second reconcile reported again: %v", got)
			}
		})
	}
}

// TestReconcileTrustsItsOwnCreateOverALaggingCache: a reconcile whose cache
// does not show the MultiKueueCluster it has just created (another event on
// the profile came first) sends nothing, and waits; once cachelag.Patience
// has passed with the cache still blind, it creates again.
func TestReconcileTrustsItsOwnCreateOverALaggingCache(t *testing.T) {
	ctx := context.Background()
	apiServer := newFakeClient(utiltesting.MakeClusterSet("dev").Obj(), utiltesting.NamespaceObj("kueue-system"),
		utiltesting.MakeBinding("kueue-system", "dev").Bound(true).Obj(),
		utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Obj(),
		utiltesting.MakeClusterProfile("kueue-system", "c1", testManager).Obj())
	writes := 0
	c := interceptor.NewClient(apiServer.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	blindCache := newFakeClient()
	r := NewReconciler(c, Readers{Cache: blindCache, API: apiServer}, events.NewFakeRecorder(10), Options{ManagerName: testManager})
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	r.created = cachelag.New(clock)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kueue-system", Name: "c1"}}
	recorder := r.recorder.(*events.FakeRecorder)
	utiltesting.ExpectACreateWaitsForItsCache(t, clock, func() (ctrl.Result, error) { return r.Reconcile(ctx, req) },
		func() int { return writes }, func() []string { return utiltesting.DrainEvents(recorder) })
}
