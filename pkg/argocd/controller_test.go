package argocd

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// publishes stands in for the access providers: every profile gets entry.
type publishes struct{ entry *cpv1alpha1.AccessProvider }

func (p publishes) Entries(context.Context, *cpv1alpha1.ClusterProfile) ([]cpv1alpha1.AccessProvider, error) {
	if p.entry == nil {
		return nil, nil
	}
	return []cpv1alpha1.AccessProvider{*p.entry}, nil
}

func (p publishes) Watch(b *builder.Builder, _ membership.ProfileMapper) *builder.Builder { return b }

// argoCDWorld is a hub where Argo CD's namespace serves cluster c1 (bound
// is false: the binding is gone), with c1's profile there.
func argoCDWorld(bound bool, extra ...client.Object) []client.Object {
	objects := []client.Object{
		utiltesting.MakeManagedCluster("c1").ClusterSet("prod").Obj(),
		utiltesting.MakeClusterSet("prod").Obj(),
		utiltesting.NamespaceObj("argocd"),
		publishedProfile(),
	}
	if bound {
		objects = append(objects, utiltesting.MakeBinding("argocd", "prod").Bound(true).Obj())
	}
	return append(objects, extra...)
}

// testNow is the reconciler's clock.
var testNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// newProfile is c1's profile a second after its writer created it, before
// it wrote the properties.
func newProfile() *cpv1alpha1.ClusterProfile {
	p := publishedProfile()
	p.CreationTimestamp = metav1.NewTime(testNow.Add(-time.Second))
	p.Status = cpv1alpha1.ClusterProfileStatus{}
	return p
}

// written is wantSecret as this capability's field manager wrote it.
func written() *corev1.Secret {
	s := wantSecret("")
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}}
	return s
}

func editedServer() *corev1.Secret {
	s := written()
	s.Data["server"] = []byte("https://elsewhere.example")
	return s
}

func handMade() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-c1",
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		Data: map[string][]byte{"name": []byte("c1"), "server": []byte("https://by-hand.example")}}
}

// TestReconcile runs Reconcile against a fake client with the production
// indexes: want the Secrets of Argo CD's namespace, and the Events.
func TestReconcile(t *testing.T) {
	cases := map[string]struct {
		objects    []client.Object
		entry      *cpv1alpha1.AccessProvider
		want       map[string]*corev1.Secret
		wantEvents []string
		// wantRequeue is when Reconcile asks to come back.
		wantRequeue time.Duration
	}{
		"a published profile gets its cluster Secret": {
			objects: argoCDWorld(true), entry: proxyEntry(),
			want: map[string]*corev1.Secret{"cluster-c1": wantSecret("")},
		},
		"a hand-made Secret of the name wins, reported": {
			objects: argoCDWorld(true, handMade()), entry: proxyEntry(),
			want: map[string]*corev1.Secret{"cluster-c1": handMade()},
			wantEvents: []string{"Warning ArgoCDClusterSecretNameTaken Secret argocd/cluster-c1 exists and was not written for this ClusterProfile; " +
				"leaving it alone (delete it to let Argo CD reach this cluster through the profile)."},
		},
		"ours, its server edited: brought back": {
			objects: argoCDWorld(true, editedServer()), entry: proxyEntry(),
			want: map[string]*corev1.Secret{"cluster-c1": wantSecret("")},
		},
		"the binding gone, ours goes": {
			objects: argoCDWorld(false, written()), entry: proxyEntry(),
			want: map[string]*corev1.Secret{},
		},
		"the binding gone, a hand-made one stays": {
			objects: argoCDWorld(false, handMade()), entry: proxyEntry(),
			want: map[string]*corev1.Secret{"cluster-c1": handMade()},
		},
		"a profile created a second ago, its properties not written yet: no Secret yet, back once it may be": {
			objects: []client.Object{utiltesting.MakeManagedCluster("c1").ClusterSet("prod").Obj(), utiltesting.MakeClusterSet("prod").Obj(),
				utiltesting.NamespaceObj("argocd"), utiltesting.MakeBinding("argocd", "prod").Bound(true).Obj(), newProfile()},
			entry: proxyEntry(), want: map[string]*corev1.Secret{}, wantRequeue: statusSettle - time.Second,
		},
		"no entry published: none, reported": {
			objects: argoCDWorld(true),
			want:    map[string]*corev1.Secret{},
			wantEvents: []string{`Warning ArgoCDClusterAccessProviderMissing The access provider "open-cluster-management" publishes no entry for this cluster ` +
				"(its gate is off, or it waits for what it needs), so Argo CD gets no cluster Secret for it."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.Builder(tc.objects...).WithReturnManagedFields().Build()
			recorder := events.NewFakeRecorder(10)
			r := &Reconciler{client: c, secrets: labelledOnly{c}, names: othersOnly{c}, apiReader: c, entries: publishes{tc.entry},
				recorder: recorder, clock: clocktesting.NewFakePassiveClock(testNow), settings: testSettings, reports: reportonce.New(),
				created: cachelag.New(clocktesting.NewFakePassiveClock(testNow))}
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "argocd", Name: "c1"}}

			result, err := r.Reconcile(context.Background(), req)
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if result.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %s, want %s", result.RequeueAfter, tc.wantRequeue)
			}

			got := fakeclient.SecretsIn(t, c, "argocd")
			for _, s := range tc.want {
				s.TypeMeta = metav1.TypeMeta{}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Secrets in argocd (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, utiltesting.DrainEvents(recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcileTrustsItsOwnCreateOverALaggingCache: a reconcile whose
// cache of our Secrets does not show the Secret it has just created
// (another event on the profile came first) sends nothing, reports
// nothing, and waits; once
// cachelag.Patience has passed with the cache still blind, it creates
// again, which the API server refuses harmlessly.
func TestReconcileTrustsItsOwnCreateOverALaggingCache(t *testing.T) {
	creates := 0
	c := fakeclient.Builder(argoCDWorld(true)...).WithReturnManagedFields().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	clock := clocktesting.NewFakePassiveClock(testNow)
	recorder := events.NewFakeRecorder(10)
	r := &Reconciler{client: c, secrets: blindTo{Reader: c, name: "cluster-c1"}, names: othersOnly{c}, apiReader: c, entries: publishes{proxyEntry()},
		recorder: recorder, clock: clock, settings: testSettings, reports: reportonce.New(), created: cachelag.New(clock)}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "argocd", Name: "c1"}}
	utiltesting.ExpectACreateWaitsForItsCache(t, clock, func() (ctrl.Result, error) { return r.Reconcile(context.Background(), req) },
		func() int { return creates }, func() []string { return utiltesting.DrainEvents(recorder) })
}

// blindTo reads like a cache that has not seen the Secret name yet.
type blindTo struct {
	client.Reader
	name string
}

func (b blindTo) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key.Name == b.name {
		return notFound(key.Name)
	}
	return b.Reader.Get(ctx, key, obj, opts...)
}

// labelledOnly reads like the cache of our Secrets, which holds only those
// labelled ours, with digests of their data.
type labelledOnly struct{ client.Reader }

func (l labelledOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := l.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if obj.GetLabels()[LabelCreatedBy] == "" {
		return notFound(key.Name)
	}
	_, err := secretdigest.Transform()(obj)
	return err
}

// othersOnly reads like the names cache, which leaves out the Secrets
// labelled ours.
type othersOnly struct{ client.Reader }

func (o othersOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := o.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if obj.GetLabels()[LabelCreatedBy] == testManager {
		return notFound(key.Name)
	}
	return nil
}

func notFound(name string) error {
	return apierrors.NewNotFound(corev1.Resource("secrets"), name)
}
