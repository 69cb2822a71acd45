package accessprovider

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

const testManager = "open-cluster-management"

// servedWorld is a hub where namespace "team" serves cluster c1 (which has
// a client config) and namespace "unbound" serves nothing.
func servedWorld() []client.Object {
	cluster := utiltesting.MakeManagedCluster("c1").Label("name", "c1").Obj()
	cluster.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.c1:6443", CABundle: utiltesting.FakeCA("CA")}}
	return []client.Object{
		cluster,
		utiltesting.MakeClusterSet("c1-set").Selector(metav1.LabelSelector{MatchLabels: map[string]string{"name": "c1"}}).Obj(),
		utiltesting.MakeBinding("team", "c1-set").Bound(true).Obj(),
		utiltesting.NamespaceObj("team"), utiltesting.NamespaceObj("unbound"),
	}
}

func directEntry() cpv1alpha1.AccessProvider {
	return cpv1alpha1.AccessProvider{Name: "direct", Cluster: clientcmdv1.Cluster{Server: "https://api.c1:6443",
		CertificateAuthorityData: utiltesting.FakeCA("CA"), Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}}
}

func withEntries(p *cpv1alpha1.ClusterProfile, entries ...cpv1alpha1.AccessProvider) *cpv1alpha1.ClusterProfile {
	p.Status.AccessProviders = entries
	return p
}

// appliedByDirect is p with the managedFields the API server records for
// the direct source's status apply of its entry: on list-map CRDs, the
// entry is the source's own only when its apply owns it.
func appliedByDirect(p *cpv1alpha1.ClusterProfile) *cpv1alpha1.ClusterProfile {
	p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
		Manager: DirectFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status",
		APIVersion: cpv1alpha1.GroupVersion.String(), FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:accessProviders":{"k:{\"name\":\"direct\"}":{".":{},"f:name":{},"f:cluster":{}}}}}`)},
	})
	return p
}

// TestReconcile runs the generic reconciler with the direct source against a
// fake client carrying the production indexes, on either kind of CRD: the
// entry goes on the profile the hub publishes, and on no other, whatever its
// labels.
func TestReconcile(t *testing.T) {
	theirs := cpv1alpha1.AccessProvider{Name: "theirs", Cluster: clientcmdv1.Cluster{Server: "https://elsewhere"}}
	cases := map[string]struct {
		profile    *cpv1alpha1.ClusterProfile
		wantStatus cpv1alpha1.ClusterProfileStatus
		wantWrite  bool
		// onlyOn, when set, is the one kind of CRD the case holds on.
		onlyOn string
	}{
		"a published profile gets the entry, others' entries kept": {
			profile:    withEntries(utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(), theirs),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{theirs, directEntry()}},
			wantWrite:  true,
		},
		"an up-to-date profile costs nothing": {
			profile:    appliedByDirect(withEntries(utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(), directEntry())),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{directEntry()}},
		},
		// On list-maps the entry is the source's only once its apply owns
		// it (an upstream twin may have written it); on atomic lists its
		// name makes it the source's.
		"the entry of its name that its apply does not own is taken over": {
			profile:    withEntries(utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(), directEntry()),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{directEntry()}},
			wantWrite:  true,
			onlyOn:     "list-maps",
		},
		"the entry of its name is up to date, whoever wrote it": {
			profile:    withEntries(utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(), directEntry()),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{directEntry()}},
			onlyOn:     "atomic lists",
		},
		"a perfect imitation in a namespace that serves nothing gets nothing": {
			profile: func() *cpv1alpha1.ClusterProfile {
				p := utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj()
				p.Labels["open-cluster-management.io/cluster-name"] = "c1"
				return p
			}(),
		},
		"an entry on a profile that is no longer served is withdrawn": {
			profile:    withEntries(utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj(), theirs, directEntry()),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{theirs}},
			wantWrite:  true,
		},
		"another manager's profile in a served namespace gets nothing": {
			profile: utiltesting.MakeClusterProfile("team", "c1", "fleet").Obj(),
		},
		"a profile claiming the cluster under another name gets nothing": {
			profile: func() *cpv1alpha1.ClusterProfile {
				p := utiltesting.MakeClusterProfile("team", "c1-shadow", testManager).Obj()
				p.Labels["open-cluster-management.io/cluster-name"] = "c1"
				return p
			}(),
		},
	}
	// With managedFields: on list-maps they tell the source's entry from an
	// entry of its name.
	for crd, builder := range map[string]func(...client.Object) *fake.ClientBuilder{
		"list-maps": fakeclient.Builder, "atomic lists": fakeclient.AtomicBuilder,
	} {
		for name, tc := range cases {
			if tc.onlyOn != "" && tc.onlyOn != crd {
				continue
			}
			t.Run(crd+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				c := builder(append(servedWorld(), tc.profile.DeepCopy())...).WithReturnManagedFields().Build()
				before := &cpv1alpha1.ClusterProfile{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(tc.profile), before); err != nil {
					t.Fatal(err)
				}
				r := NewReconciler(c, c, &Direct{Reader: c, Name: "direct"}, testManager, nil)

				if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.profile)}); err != nil {
					t.Fatalf("Reconcile: %v", err)
				}

				got := &cpv1alpha1.ClusterProfile{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(tc.profile), got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantStatus, got.Status); diff != "" {
					t.Errorf("status (-want +got):\n%s", diff)
				}
				if wrote := got.ResourceVersion != before.ResourceVersion; wrote != tc.wantWrite {
					t.Errorf("wrote = %v, want %v", wrote, tc.wantWrite)
				}
			})
		}
	}
}

// TestAClustersNameKeyServesEveryProfileOfThatName: the key a start's
// burst folds into (namekeys) reconciles each profile named after the
// cluster, in every namespace, as its own key would, and no other.
func TestAClustersNameKeyServesEveryProfileOfThatName(t *testing.T) {
	theirs := cpv1alpha1.AccessProvider{Name: "theirs", Cluster: clientcmdv1.Cluster{Server: "https://elsewhere"}}
	profiles := []*cpv1alpha1.ClusterProfile{
		utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(),
		withEntries(utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj(), theirs, directEntry()),
		withEntries(utiltesting.MakeClusterProfile("team", "c2", testManager).Obj(), directEntry()),
	}
	objects := servedWorld()
	for _, p := range profiles {
		objects = append(objects, p.DeepCopy())
	}
	c := fakeclient.New(objects...)
	r := NewReconciler(c, c, &Direct{Reader: c, Name: "direct"}, testManager, nil)

	if _, err := r.Reconcile(context.Background(), namekeys.Key("c1")); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	want := map[string][]cpv1alpha1.AccessProvider{
		"team/c1":    {directEntry()},
		"unbound/c1": {theirs},
		// Not named c1: left as it was, served or not.
		"team/c2": {directEntry()},
	}
	got := map[string][]cpv1alpha1.AccessProvider{}
	for _, p := range profiles {
		current := &cpv1alpha1.ClusterProfile{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), current); err != nil {
			t.Fatal(err)
		}
		got[client.ObjectKeyFromObject(p).String()] = current.Status.AccessProviders
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries by profile (-want +got):\n%s", diff)
	}
}

func TestReconcileOfAProfileThatIsGone(t *testing.T) {
	c := fakeclient.New(servedWorld()...)
	r := NewReconciler(c, c, &Direct{Reader: c, Name: "direct"}, testManager, nil)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "c1"}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
}

// mirrorDeleting is a forecast of this process's mirror: it deletes the
// profiles it names.
type mirrorDeleting map[types.NamespacedName]bool

func (m mirrorDeleting) WillDelete(_ context.Context, p *cpv1alpha1.ClusterProfile) (bool, error) {
	return m[client.ObjectKeyFromObject(p)], nil
}

// TestAnEntryGoesWithAProfileTheMirrorDeletes: on a profile no namespace
// serves any more and this process's mirror is about to delete, the entry
// waits withdrawGrace for the deletion instead of costing a write; if the
// profile is still there after it, the entry is withdrawn.
func TestAnEntryGoesWithAProfileTheMirrorDeletes(t *testing.T) {
	profile := withEntries(utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj(), directEntry())
	c := fakeclient.New(append(servedWorld(), profile)...)
	now := time.Now()
	key := client.ObjectKeyFromObject(profile)
	r := NewReconciler(c, c, &Direct{Reader: c, Name: "direct"}, testManager, mirrorDeleting{key: true})
	r.now = func() time.Time { return now }

	for _, step := range []struct {
		after       time.Duration
		wantRequeue time.Duration
		wantEntries []cpv1alpha1.AccessProvider
	}{
		{after: 0, wantRequeue: withdrawGrace, wantEntries: []cpv1alpha1.AccessProvider{directEntry()}},
		{after: withdrawGrace / 2, wantRequeue: withdrawGrace / 2, wantEntries: []cpv1alpha1.AccessProvider{directEntry()}},
		{after: withdrawGrace / 2, wantRequeue: 0, wantEntries: nil},
	} {
		now = now.Add(step.after)
		result, got := reconcileProfile(t, r, c, key)
		if result.RequeueAfter != step.wantRequeue {
			t.Errorf("after %s more: RequeueAfter = %s, want %s", step.after, result.RequeueAfter, step.wantRequeue)
		}
		if diff := cmp.Diff(step.wantEntries, got.Status.AccessProviders); diff != "" {
			t.Errorf("after %s more: entries (-want +got):\n%s", step.after, diff)
		}
	}
}

// TestAnEntryLeavesAtOnceWhenNoMirrorHereDeletesTheProfile: whoever claims
// to be the mirror in managedFields, an unserved profile that this
// process's mirror is not deleting (no mirror here, OCM's publishing,
// another manager's profile) loses the entry in the first reconcile.
func TestAnEntryLeavesAtOnceWhenNoMirrorHereDeletesTheProfile(t *testing.T) {
	profile := withEntries(utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj(), directEntry())
	profile.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: clusterprofile.MirrorFieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: cpv1alpha1.GroupVersion.String(), FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:displayName":{}}}`)},
	}}
	for name, deletions := range map[string]MirrorDeletions{
		"no mirror here":                nil,
		"the mirror is not deleting it": mirrorDeleting{},
	} {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.Builder(append(servedWorld(), profile.DeepCopy())...).WithReturnManagedFields().Build()
			r := NewReconciler(c, c, &Direct{Reader: c, Name: "direct"}, testManager, deletions)
			result, got := reconcileProfile(t, r, c, client.ObjectKeyFromObject(profile))

			if result.RequeueAfter != 0 || len(got.Status.AccessProviders) != 0 {
				t.Errorf("RequeueAfter %s, entries %v; want the entry withdrawn at once", result.RequeueAfter, got.Status.AccessProviders)
			}
		})
	}
}

// reconcileProfile reconciles one profile and reads it back.
func reconcileProfile(t *testing.T, r *Reconciler, c client.Client, key types.NamespacedName) (ctrl.Result, *cpv1alpha1.ClusterProfile) {
	t.Helper()
	result, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	got := &cpv1alpha1.ClusterProfile{}
	if err := c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	return result, got
}

// withTwin is the direct source with an upstream twin, for tests of what
// yields.
type withTwin struct {
	*Direct
	twin *coexistence.TwinWatch
}

func (s withTwin) Twin() *coexistence.TwinWatch { return s.twin }

// TestRevocationNeverYields: while the source's twin, installed by a hub
// admin, writes the entry, the source writes nothing on a published profile,
// but an unpublished one loses the entry all the same, whoever wrote it.
func TestRevocationNeverYields(t *testing.T) {
	twin := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "addons", Name: "cluster-proxy-addon-manager"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "manager", Args: []string{"--feature-gates=ClusterProfile=true"}}}}}}}
	addOn := &addonv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy"}}
	theirs := directEntry()
	theirs.Cluster.Server = "https://written-by-the-twin.example"
	published := utiltesting.MakeClusterProfile("team", "c1", testManager).Obj()
	unpublished := withEntries(utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj(), theirs)
	c := fakeclient.New(append(servedWorld(), twin, addOn, published, unpublished)...)
	source := withTwin{Direct: &Direct{Reader: c, Name: "direct"},
		twin: coexistence.NewTwinWatchReading(coexistence.ClusterProxyWriter, coexistence.Trust{Namespaces: []string{"addons"}}, c, nil)}
	r := NewReconciler(c, c, source, testManager, nil)

	_, got := reconcileProfile(t, r, c, client.ObjectKeyFromObject(published))
	if len(got.Status.AccessProviders) != 0 {
		t.Errorf("a published profile got %v while the twin writes the entry; want nothing written", got.Status.AccessProviders)
	}
	_, got = reconcileProfile(t, r, c, client.ObjectKeyFromObject(unpublished))
	if len(got.Status.AccessProviders) != 0 {
		t.Errorf("an unpublished profile keeps %v while the twin writes; want it revoked", got.Status.AccessProviders)
	}
}

// TestAFailedRevocationIsRetriedAtOnce: a revocation the API server refuses
// because the profile changed since it was read is retried soon and not
// counted as done: the retry removes the entry without waiting the pause of
// an entry put back.
func TestAFailedRevocationIsRetriedAtOnce(t *testing.T) {
	theirs := directEntry()
	theirs.Cluster.Server = "https://written-by-another-writer.example"
	unpublished := withEntries(utiltesting.MakeClusterProfile("unbound", "c1", testManager).Obj(), theirs)
	refusals := 1
	c := fakeclient.Builder(append(servedWorld(), unpublished)...).WithInterceptorFuncs(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if refusals > 0 {
				refusals--
				return apierrors.NewConflict(cpv1alpha1.GroupVersion.WithResource("clusterprofiles").GroupResource(), obj.GetName(), nil)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	r := NewReconciler(c, c, &Direct{Reader: c, Name: "direct"}, testManager, nil)
	key := client.ObjectKeyFromObject(unpublished)

	result, got := reconcileProfile(t, r, c, key)
	if len(got.Status.AccessProviders) != 1 || result.RequeueAfter == 0 || result.RequeueAfter > time.Second {
		t.Fatalf("the refused removal: entries %v, requeue after %s; want the entry kept and a retry within a second", got.Status.AccessProviders, result.RequeueAfter)
	}
	result, got = reconcileProfile(t, r, c, key)
	if len(got.Status.AccessProviders) != 0 || result.RequeueAfter != 0 {
		t.Errorf("the retry: entries %v, requeue after %s; want the entry removed at once", got.Status.AccessProviders, result.RequeueAfter)
	}
}

// TestAnEntryPutBackIsRevokedAfterAGrowingPause: the first revocation is
// immediate; each time the entry comes back, the next waits twice as long,
// up to revokeAgainMax; a profile published again starts afresh.
func TestAnEntryPutBackIsRevokedAfterAGrowingPause(t *testing.T) {
	r := newRevocations()
	key := types.NamespacedName{Namespace: "unbound", Name: "c1"}
	now := time.Now()
	var waits []time.Duration
	for i := 0; i < 9; i++ {
		waits = append(waits, r.wait(key, now))
		r.revoked(key, now)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second,
		320 * time.Second, 600 * time.Second, 600 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("pauses (-want +got):\n%s", diff)
	}
	if got := r.wait(key, now.Add(time.Hour)); got != 0 {
		t.Errorf("after the pause: wait %s, want 0", got)
	}
	r.forget(key)
	if got := r.wait(key, now); got != 0 {
		t.Errorf("after forget: wait %s, want 0", got)
	}
}

// TestOnlyTheConfiguredCertificateReconcilesEveryProfile: the user server
// certificate in the namespace the ManagedProxyConfiguration names maps to
// every profile; a Secret of its name anywhere else (anyone may make one)
// maps to none.
func TestOnlyTheConfiguredCertificateReconcilesEveryProfile(t *testing.T) {
	all := func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team", Name: "c1"}}}
	}
	certificate := func(namespace string) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: UserServerSecretName}}
	}
	cases := map[string]struct {
		objects []client.Object
		secret  client.Object
		want    int
	}{
		"the configured namespace's":     {objects: []client.Object{utiltesting.MakeProxyConfiguration("ocm-proxy")}, secret: certificate("ocm-proxy"), want: 1},
		"a tenant's Secret of that name": {objects: []client.Object{utiltesting.MakeProxyConfiguration("ocm-proxy")}, secret: certificate("team"), want: 0},
		"no configuration":               {secret: certificate("ocm-proxy"), want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &Proxy{Reader: fakeclient.New(tc.objects...)}
			if got := len(p.certificateToProfiles(all)(context.Background(), tc.secret)); got != tc.want {
				t.Errorf("requests = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestARevocationWaitsForTheAPIServer: each cache has its own watch, so the
// profile cache can show a profile before the binding cache shows the
// binding that serves it. An entry is revoked only when the API server,
// read live, does not serve the profile either.
func TestARevocationWaitsForTheAPIServer(t *testing.T) {
	theirs := directEntry()
	theirs.Cluster.Server = "https://written-by-another-writer.example"
	profile := func(entries ...cpv1alpha1.AccessProvider) *cpv1alpha1.ClusterProfile {
		return withEntries(utiltesting.MakeClusterProfile("fresh", "c1", testManager).Obj(), entries...)
	}
	freshBinding := []client.Object{utiltesting.NamespaceObj("fresh"), utiltesting.MakeBinding("fresh", "c1-set").Bound(true).Obj()}
	cases := map[string]struct {
		profile     *cpv1alpha1.ClusterProfile
		liveBinding bool
		want        []cpv1alpha1.AccessProvider
	}{
		"the cache lags a binding: the writer's own entry stays": {
			profile: profile(directEntry()), liveBinding: true, want: []cpv1alpha1.AccessProvider{directEntry()},
		},
		"the cache lags a binding: another writer's entry stays": {
			profile: profile(theirs), liveBinding: true, want: []cpv1alpha1.AccessProvider{theirs},
		},
		"the API server does not serve it either: the writer's own entry goes": {
			profile: profile(directEntry()),
		},
		"the API server does not serve it either: another writer's entry goes": {
			profile: profile(theirs),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			world := append(servedWorld(), utiltesting.NamespaceObj("fresh"), tc.profile)
			c := fakeclient.New(world...)
			live := fakeclient.New(world...)
			if tc.liveBinding {
				live = fakeclient.New(append(append(servedWorld(), tc.profile), freshBinding...)...)
			}
			r := NewReconciler(c, live, &Direct{Reader: c, Name: "direct"}, testManager, nil)

			_, got := reconcileProfile(t, r, c, client.ObjectKeyFromObject(tc.profile))

			if diff := cmp.Diff(tc.want, got.Status.AccessProviders); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}
