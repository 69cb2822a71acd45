package namekeys

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func key(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// drain takes every item q holds now, in order.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []reconcile.Request {
	var got []reconcile.Request
	for q.Len() > 0 {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	return got
}

// TestFoldKeepsOneKeyPerNameUntilTheFirstGet: a start's burst of profile
// keys, from every watch, becomes one key per cluster; once a worker has
// taken an item, keys pass unchanged.
func TestFoldKeepsOneKeyPerNameUntilTheFirstGet(t *testing.T) {
	q := NewQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	for _, namespace := range []string{"team-a", "team-b", "team-c"} {
		for _, cluster := range []string{"cluster1", "cluster2"} {
			q.Add(key(namespace, cluster))
		}
	}
	q.AddRateLimited(key("team-d", "cluster3"))
	q.AddAfter(key("team-d", "cluster4"), 30*time.Millisecond) // after the rate limiter's first 5 ms
	q.Add(Key("cluster1"))
	time.Sleep(150 * time.Millisecond)

	burst := drain(q)
	want := []reconcile.Request{Key("cluster1"), Key("cluster2"), Key("cluster3"), Key("cluster4")}
	if diff := cmp.Diff(want, burst); diff != "" {
		t.Errorf("keys of the start's burst (-want +got):\n%s", diff)
	}

	q.Add(key("team-a", "cluster1"))
	q.Add(key("team-b", "cluster1"))
	after := drain(q)
	if diff := cmp.Diff([]reconcile.Request{key("team-a", "cluster1"), key("team-b", "cluster1")}, after); diff != "" {
		t.Errorf("keys once working (-want +got):\n%s", diff)
	}
}

// TestEach: a namespaced key is served alone; a name key by each key its
// name lists, all of them even after a failure, asking again at the
// soonest any asks, with every error.
func TestEach(t *testing.T) {
	failA, failB := errors.New("a failed"), errors.New("b failed")
	results := map[types.NamespacedName]struct {
		result reconcile.Result
		err    error
	}{
		{Namespace: "team-a", Name: "cluster1"}: {result: reconcile.Result{RequeueAfter: time.Minute}, err: failA},
		{Namespace: "team-b", Name: "cluster1"}: {result: reconcile.Result{RequeueAfter: 10 * time.Second}},
		{Namespace: "team-c", Name: "cluster1"}: {err: failB},
		{Namespace: "team-d", Name: "cluster1"}: {result: reconcile.Result{RequeueAfter: 30 * time.Second}},
	}
	named := func(_ context.Context, name string) ([]types.NamespacedName, error) {
		if name == "unlisted" {
			return nil, errors.New("no list")
		}
		return []types.NamespacedName{
			{Namespace: "team-a", Name: name}, {Namespace: "team-b", Name: name},
			{Namespace: "team-c", Name: name}, {Namespace: "team-d", Name: name},
		}, nil
	}
	tests := map[string]struct {
		req        reconcile.Request
		wantServed []string
		wantResult reconcile.Result
		wantErr    string
	}{
		"a profile's key": {req: key("team-b", "cluster1"), wantServed: []string{"team-b/cluster1"},
			wantResult: reconcile.Result{RequeueAfter: 10 * time.Second}},
		"a cluster's name key": {req: Key("cluster1"),
			wantServed: []string{"team-a/cluster1", "team-b/cluster1", "team-c/cluster1", "team-d/cluster1"},
			wantResult: reconcile.Result{RequeueAfter: 10 * time.Second}, wantErr: "a failed\nb failed"},
		"a name that cannot be listed": {req: Key("unlisted"), wantErr: "no list"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var served []string
			one := func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
				served = append(served, req.String())
				r := results[req.NamespacedName]
				return r.result, r.err
			}
			result, err := Each(context.Background(), tc.req, named, one)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(struct {
				Served []string
				Result reconcile.Result
				Err    string
			}{tc.wantServed, tc.wantResult, tc.wantErr}, struct {
				Served []string
				Result reconcile.Result
				Err    string
			}{served, result, gotErr}); diff != "" {
				t.Errorf("Each (-want +got):\n%s", diff)
			}
		})
	}
}
