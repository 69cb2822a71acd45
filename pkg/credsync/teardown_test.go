package credsync

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// flakyAPI refuses the first lists and the first deletes of one Secret, as an
// API server that is briefly unavailable in the middle of a teardown.
type flakyAPI struct {
	listFailures, deleteFailures int
	refusedName                  string
}

func (f *flakyAPI) funcs() interceptor.Funcs {
	unavailable := apierrors.NewServiceUnavailable("the API server is restarting")
	return interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if f.listFailures > 0 {
				f.listFailures--
				return unavailable
			}
			return c.List(ctx, list, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if obj.GetName() == f.refusedName && f.deleteFailures > 0 {
				f.deleteFailures--
				return unavailable
			}
			return c.Delete(ctx, obj, opts...)
		},
	}
}

// TestTheCopiesTeardownRetriesUntilNoCopyIsLeft: the API server fails a list,
// then the delete of one copy in the middle of the list several times. The
// teardown, retried as the capability runner retries it, deletes every copy
// and nothing else.
func TestTheCopiesTeardownRetriesUntilNoCopyIsLeft(t *testing.T) {
	kueue, argocd := profile("kueue", "c1"), profile("argocd", "c2")
	copies := append(DesiredCopies(kueue, "c1", []Source{tokenSource("c1", "a", "t1"), tokenSource("c1", "b", "t2")}, Rules{}),
		DesiredCopies(argocd, "c2", []Source{tokenSource("c2", "a", "t3")}, Rules{})...)
	mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue", Name: "c1-b-mine"}}
	objs := []client.Object{mine}
	for _, s := range copies {
		objs = append(objs, s)
	}
	api := &flakyAPI{listFailures: 1, deleteFailures: 3, refusedName: copies[1].Name}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(api.funcs()).Build()

	var failures []error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	capability.RetryUntilDone(ctx, wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 4 * time.Millisecond},
		func(ctx context.Context) error { _, err := deleteCopies(ctx, c, c); return err },
		func(err error, _ int) { failures = append(failures, err) })

	var left corev1.SecretList
	if err := c.List(ctx, &left); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range left.Items {
		names = append(names, s.Namespace+"/"+s.Name)
	}
	if diff := cmp.Diff([]string{"kueue/c1-b-mine"}, names); diff != "" {
		t.Errorf("Secrets left (-want +got):\n%s", diff)
	}
	refused := "deleting synced Secret kueue/" + copies[1].Name + ": the API server is restarting"
	want := []string{"listing *v1.SecretList: the API server is restarting", refused, refused, refused}
	var got []string
	for _, err := range failures {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failed attempts (-want +got):\n%s", diff)
	}
}
