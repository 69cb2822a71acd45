package credsync

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachelag"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// copiesOnly reads like the syncer's copies cache, which holds only Secrets
// with the synced-from label.
type copiesOnly struct{ client.Reader }

func (c copiesOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if obj.GetLabels()[LabelSyncedFrom] == "" {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return nil
}

// hub is a world where namespace "team" serves cluster c1, whose
// ManagedServiceAccount "multikueue" asks for sync and has a token.
func hub(extra ...client.Object) []client.Object {
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "multikueue", Labels: map[string]string{LabelSyncToClusterProfile: "true"}},
		Status: authv1beta1.ManagedServiceAccountStatus{ExpirationTimestamp: &metav1.Time{Time: testExpiry},
			TokenSecretRef: &authv1beta1.SecretRef{Name: "multikueue"}},
	}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "multikueue",
		Labels: map[string]string{LabelIsManagedServiceAccount: "true"}},
		Data: map[string][]byte{"token": []byte("t1"), "ca.crt": []byte("ca")}}
	return append([]client.Object{
		utiltesting.MakeManagedCluster("c1").Label("name", "c1").Obj(),
		utiltesting.MakeClusterSet("c1-set").Selector(metav1.LabelSelector{MatchLabels: map[string]string{"name": "c1"}}).Obj(),
		utiltesting.MakeBinding("team", "c1-set").Bound(true).Obj(),
		utiltesting.NamespaceObj("team"), utiltesting.NamespaceObj("unbound"),
		msa, token,
	}, extra...)
}

// scoped is hub with multikueue's consumer namespaces set to value.
func scoped(value string, extra ...client.Object) []client.Object {
	objects := hub(extra...)
	for _, obj := range objects {
		if msa, ok := obj.(*authv1beta1.ManagedServiceAccount); ok {
			msa.Annotations = map[string]string{cpcreds.AnnotationConsumerNamespaces: value}
		}
	}
	return objects
}

// publishedAt publishes every cluster at one server, as a stand-in for the
// access providers (whose own entries are tested in accessprovider).
type publishedAt string

func (p publishedAt) Entries(_ context.Context, profile *cpv1alpha1.ClusterProfile) ([]cpv1alpha1.AccessProvider, error) {
	return []cpv1alpha1.AccessProvider{{Name: "open-cluster-management",
		Cluster: clientcmdv1.Cluster{Server: string(p) + "/" + profile.Name, CertificateAuthorityData: []byte("proxy CA")}}}, nil
}

func (p publishedAt) Watch(b *builder.Builder, _ membership.ProfileMapper) *builder.Builder { return b }

const unscopedEvent = "Warning UnscopedTokenCopied This ManagedServiceAccount names no consumer namespaces, so its token is copied " +
	"into every namespace that serves cluster c1 (now: team) and any consumer there can use it. " +
	"Set the annotation clusterprofile.open-cluster-management.io/consumer-namespaces to the namespaces that need it."

// digestedTokens reads like the syncer's tokens cache, which holds the
// tokens' digests.
type digestedTokens struct{ client.Reader }

func (d digestedTokens) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := d.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	_, err := secretdigest.Transform()(obj)
	return err
}

func newTestReconciler(c client.Client, recorder events.EventRecorder) *Reconciler {
	return &Reconciler{client: c, members: membership.Reader{Client: c}, tokens: digestedTokens{c}, copies: copiesOnly{c}, apiReader: c,
		recorder: recorder, managerName: "open-cluster-management", reports: reportonce.New(), blockers: newBlockers(nil),
		created: cachelag.New(clock.RealClock{})}
}

func syncedCopy(ns string) *corev1.Secret {
	return syncedCopyWith(ns, tokenSource("c1", "multikueue", "t1"), Rules{})
}

func syncedCopyWith(ns string, source Source, rules Rules) *corev1.Secret {
	s := DesiredCopies(profile(ns, "c1"), "c1", []Source{source}, rules)[0]
	s.TypeMeta = metav1.TypeMeta{}
	return s
}

// TestReconcile runs the syncer's Reconcile against a fake client with the
// production indexes and a fake event recorder: want Secrets, want events.
func TestReconcile(t *testing.T) {
	squatter := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1-multikueue"},
		Data: map[string][]byte{"token": []byte("somebody else's")}}
	scopedToTeam := tokenSource("c1", "multikueue", "t1")
	scopedToTeam.MSA.Annotations = map[string]string{cpcreds.AnnotationConsumerNamespaces: "team"}
	cases := map[string]struct {
		namespace  string
		objects    []client.Object
		unscoped   UnscopedTokens
		published  Published
		want       map[string]*corev1.Secret
		wantEvents []string
		wantBlocks []string
	}{
		"a served profile gets the copy of an unscoped token, with a warning": {
			namespace: "team", objects: hub(profile("team", "c1")),
			want:       map[string]*corev1.Secret{"c1-multikueue": syncedCopy("team")},
			wantEvents: []string{unscopedEvent},
		},
		"unscoped tokens go nowhere when asked, unreported": {
			namespace: "team", objects: hub(profile("team", "c1"), syncedCopy("team")), unscoped: UnscopedNowhere,
			want: map[string]*corev1.Secret{},
		},
		"a scoped token goes to a namespace it names, recording the published server": {
			namespace: "team", objects: scoped("argocd,team", profile("team", "c1")), unscoped: UnscopedNowhere,
			published: publishedAt("https://proxy.example.com:9092"),
			want: map[string]*corev1.Secret{"c1-multikueue": syncedCopyWith("team", scopedToTeam, Rules{Servers: []cpcreds.PublishedServer{
				{Server: "https://proxy.example.com:9092/c1", CASHA256: "be7c71b72ec51f80aad6c47e11811690f5164ba8eff775d5fea3ae66cb83ad76"}}})},
		},
		"a scoped token leaves a namespace it no longer names": {
			namespace: "team", objects: scoped("argocd", profile("team", "c1"), syncedCopy("team")),
			want: map[string]*corev1.Secret{},
		},
		"entries that name no namespace are reported": {
			namespace: "team", objects: scoped("*,team-*", profile("team", "c1")),
			want: map[string]*corev1.Secret{},
			wantEvents: []string{"Warning ConsumerNamespacesInvalid Ignoring *, team-* in the annotation " +
				"clusterprofile.open-cluster-management.io/consumer-namespaces: not namespace names (no wildcards); " +
				"list the consumer namespaces by name, comma-separated."},
		},
		"a forged profile in a namespace that serves nothing gets none, and loses one it had": {
			namespace: "unbound", objects: hub(profile("unbound", "c1"), syncedCopy("unbound")),
			want: map[string]*corev1.Secret{},
		},
		"a name held by another Secret is reported, watched, and never overwritten": {
			namespace: "team", objects: hub(profile("team", "c1"), squatter),
			want: map[string]*corev1.Secret{"c1-multikueue": squatter},
			wantEvents: []string{unscopedEvent, "Warning SyncedSecretNameCollision Not copying the token to team/c1-multikueue: " +
				"that name holds a Secret that is not a synced token. Rename this ManagedServiceAccount."},
			wantBlocks: []string{"team/c1-multikueue"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.Builder(tc.objects...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
			recorder := events.NewFakeRecorder(10)
			r := newTestReconciler(c, recorder)
			r.unscoped, r.published = tc.unscoped, tc.published
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: tc.namespace, Name: "c1"}}

			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			got := fakeclient.SecretsIn(t, c, tc.namespace)
			for _, s := range tc.want {
				s.ResourceVersion = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Secrets in %s (-want +got):\n%s", tc.namespace, diff)
			}
			var events []string
			for len(recorder.Events) > 0 {
				events = append(events, <-recorder.Events)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBlocks, r.blockers.blockedNames()); diff != "" {
				t.Errorf("watched names (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAClustersNameKeyServesEveryNamespaceOfIt: the key a start's burst
// folds into (namekeys) reconciles each namespace holding a profile of
// the cluster or a copy of its tokens, as their own keys would: the served
// namespace gets its copy, a copy left where no profile is goes.
func TestAClustersNameKeyServesEveryNamespaceOfIt(t *testing.T) {
	c := fakeclient.Builder(hub(profile("team", "c1"), syncedCopy("unbound"))...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
	r := newTestReconciler(c, events.NewFakeRecorder(10))

	if _, err := r.Reconcile(context.Background(), namekeys.Key("c1")); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	got := map[string]map[string]*corev1.Secret{"team": fakeclient.SecretsIn(t, c, "team"), "unbound": fakeclient.SecretsIn(t, c, "unbound")}
	want := map[string]map[string]*corev1.Secret{"team": {"c1-multikueue": syncedCopy("team")}, "unbound": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Secrets by namespace (-want +got):\n%s", diff)
	}
}

// upstreamCopy is the copy managed-serviceaccount's own syncer writes of
// multikueue's token next to c1's profile in ns: its name and label, the
// token's data, an owner reference to the profile, none of our marks.
func upstreamCopy(ns string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-multikueue",
		Labels: map[string]string{LabelSyncedFrom: "c1-multikueue"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ClusterProfile",
			Name: "c1", UID: types.UID("uid-" + ns + "-c1"), Controller: ptr.To(true)}}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte("t1"), "ca.crt": []byte("ca")}}
}

// upstreamSyncer is managed-serviceaccount's manager Deployment with its
// ClusterProfile syncer on.
func upstreamSyncer() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "addons", Name: "managed-serviceaccount-addon-manager"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "manager", Command: []string{"/msa", "manager"}, Args: []string{"--feature-gates=ClusterProfileCredSyncer=true"}}}}}}}
}

// TestReconcileWhileYielding: while managed-serviceaccount's own syncer is
// on, the syncer creates and changes no copy, and marks that syncer's copies
// where this bundle's rules put a copy; but every copy the rules do not
// allow goes, whoever wrote it: revocation never yields.
func TestReconcileWhileYielding(t *testing.T) {
	marked := func(s *corev1.Secret, rules Rules, source Source) *corev1.Secret {
		s.Annotations = DesiredCopies(profile(s.Namespace, "c1"), "c1", []Source{source}, rules)[0].Annotations
		s.Annotations[cpcreds.AnnotationUpstreamCopy] = "true"
		return s
	}
	namedTeam := tokenSource("c1", "multikueue", "t1")
	namedTeam.MSA.Annotations = map[string]string{cpcreds.AnnotationConsumerNamespaces: "team"}
	ofAnotherProfile := func() *corev1.Secret {
		s := upstreamCopy("team")
		s.OwnerReferences[0].UID = "uid-of-something-else"
		return s
	}
	cases := map[string]struct {
		namespace  string
		objects    []client.Object
		want       map[string]*corev1.Secret
		wantEvents []string
	}{
		"no copy is made": {
			objects: hub(profile("team", "c1"), upstreamSyncer(), msaAddOn()),
			want:    map[string]*corev1.Secret{}, wantEvents: []string{unscopedEvent},
		},
		"the upstream syncer's copy gets the marks and nothing else": {
			objects:    hub(profile("team", "c1"), upstreamSyncer(), msaAddOn(), upstreamCopy("team")),
			want:       map[string]*corev1.Secret{"c1-multikueue": marked(upstreamCopy("team"), Rules{}, tokenSource("c1", "multikueue", "t1"))},
			wantEvents: []string{unscopedEvent},
		},
		"a copy in a namespace the ManagedServiceAccount does not name goes": {
			// Marked while the ManagedServiceAccount named team.
			objects: scoped("argocd", profile("team", "c1"), upstreamSyncer(), msaAddOn(),
				marked(upstreamCopy("team"), Rules{}, namedTeam)),
			want: map[string]*corev1.Secret{},
		},
		"this syncer's own copy in a namespace the ManagedServiceAccount does not name goes": {
			objects: scoped("argocd", profile("team", "c1"), upstreamSyncer(), msaAddOn(), syncedCopy("team")),
			want:    map[string]*corev1.Secret{},
		},
		"a copy next to a profile the hub does not publish goes": {
			namespace: "unbound",
			objects:   hub(profile("unbound", "c1"), upstreamSyncer(), msaAddOn(), upstreamCopy("unbound")),
			want:      map[string]*corev1.Secret{},
		},
		"a copy whose ManagedServiceAccount no longer asks for sync goes": {
			objects: unlabelled(hub(profile("team", "c1"), upstreamSyncer(), msaAddOn(), upstreamCopy("team"))),
			want:    map[string]*corev1.Secret{},
		},
		"a Secret of another profile at the copy's name is not vouched for": {
			objects:    hub(profile("team", "c1"), upstreamSyncer(), msaAddOn(), ofAnotherProfile()),
			want:       map[string]*corev1.Secret{"c1-multikueue": ofAnotherProfile()},
			wantEvents: []string{unscopedEvent},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.Builder(tc.objects...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
			recorder := events.NewFakeRecorder(10)
			r := newTestReconciler(c, recorder)
			r.upstream = coexistence.NewTwinWatchReading(coexistence.ManagedServiceAccountSyncer, coexistence.Trust{Namespaces: []string{"addons"}}, c, nil)
			if yielding, err := r.upstream.Yielding(context.Background()); err != nil || !yielding {
				t.Fatalf("the syncer must yield to the upstream one: %v, %v", yielding, err)
			}
			namespace := tc.namespace
			if namespace == "" {
				namespace = "team"
			}

			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: "c1"}}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			got := fakeclient.SecretsIn(t, c, namespace)
			for _, s := range got {
				s.OwnerReferences = ownerUIDs(s.OwnerReferences)
			}
			for _, s := range tc.want {
				s.ResourceVersion, s.OwnerReferences = "", ownerUIDs(s.OwnerReferences)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Secrets in %s (-want +got):\n%s", namespace, diff)
			}
			var events []string
			for len(recorder.Events) > 0 {
				events = append(events, <-recorder.Events)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestADecoyDoesNotStopRevocation: a Deployment named like
// managed-serviceaccount's manager, with its gate on, in a tenant's own
// namespace, changes nothing: the syncer does not yield, and a copy the
// rules no longer allow goes.
func TestADecoyDoesNotStopRevocation(t *testing.T) {
	decoy := upstreamSyncer()
	decoy.Namespace = "team"
	c := fakeclient.Builder(scoped("argocd", profile("team", "c1"), msaAddOn(), decoy, syncedCopy("team"))...).
		WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
	r := newTestReconciler(c, events.NewFakeRecorder(10))
	r.upstream = coexistence.NewTwinWatchReading(coexistence.ManagedServiceAccountSyncer, coexistence.Trust{}, c, nil)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "c1"}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if diff := cmp.Diff(map[string]*corev1.Secret{}, fakeclient.SecretsIn(t, c, "team")); diff != "" {
		t.Errorf("Secrets in team (-want +got):\n%s", diff)
	}
}

// msaAddOn is the ClusterManagementAddOn managed-serviceaccount's install
// creates: with it, its manager Deployment in an upstream namespace is the
// twin.
func msaAddOn() *addonv1beta1.ClusterManagementAddOn {
	return &addonv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "managed-serviceaccount"}}
}

// unlabelled takes the sync label off the ManagedServiceAccounts among objects.
func unlabelled(objects []client.Object) []client.Object {
	for _, obj := range objects {
		if msa, ok := obj.(*authv1beta1.ManagedServiceAccount); ok {
			msa.Labels = nil
		}
	}
	return objects
}

// ownerUIDs keeps what the syncer reads of owner references.
func ownerUIDs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, r := range refs {
		out = append(out, metav1.OwnerReference{UID: r.UID})
	}
	return out
}

// TestARemovalWaitsForTheAPIServer: the copies cache can show a copy before
// the caches that explain it catch up (each cache has its own watch). A copy
// the stale caches do not want but the API server does stays; one the API
// server does not want either goes, whoever wrote it, unless the API server
// no longer has it (deleted before, the copies cache behind): not again.
func TestARemovalWaitsForTheAPIServer(t *testing.T) {
	unbound := func(objects []client.Object) []client.Object {
		for i, obj := range objects {
			if _, ok := obj.(*clusterv1beta2.ManagedClusterSetBinding); ok {
				objects[i] = utiltesting.MakeBinding("team", "c1-set").Bound(false).Obj()
			}
		}
		return objects
	}
	withoutMSA := func(objects []client.Object) []client.Object {
		return slices.DeleteFunc(objects, func(obj client.Object) bool {
			_, ok := obj.(*authv1beta1.ManagedServiceAccount)
			return ok
		})
	}
	unlabelledToken := func(objects []client.Object) []client.Object {
		for _, obj := range objects {
			if s, ok := obj.(*corev1.Secret); ok && s.Namespace == "c1" {
				s.Labels = nil
			}
		}
		return objects
	}
	yielding := []client.Object{upstreamSyncer(), msaAddOn()}
	cases := map[string]struct {
		cached, live []client.Object
		want         map[string]*corev1.Secret
	}{
		"a copy whose binding the cache has not seen Bound stays": {
			cached: unbound(hub(profile("team", "c1"), syncedCopy("team"))),
			live:   hub(profile("team", "c1")),
			want:   map[string]*corev1.Secret{"c1-multikueue": syncedCopy("team")},
		},
		"managed-serviceaccount's copy of a profile the cache has not seen stays": {
			cached: hub(append(yielding, upstreamCopy("team"))...),
			live:   hub(profile("team", "c1")),
			want:   map[string]*corev1.Secret{"c1-multikueue": upstreamCopy("team")},
		},
		"a copy of a ManagedServiceAccount the cache has not seen stays": {
			cached: withoutMSA(hub(profile("team", "c1"), syncedCopy("team"))),
			live:   hub(profile("team", "c1")),
			want:   map[string]*corev1.Secret{"c1-multikueue": syncedCopy("team")},
		},
		"a copy the API server does not want either goes": {
			cached: unbound(hub(profile("team", "c1"), syncedCopy("team"))),
			live:   unbound(hub(profile("team", "c1"), syncedCopy("team"))),
			want:   map[string]*corev1.Secret{},
		},
		"a copy the API server no longer has is not deleted again (the cache has not seen the delete)": {
			cached: unbound(hub(profile("team", "c1"), syncedCopy("team"))),
			live:   unbound(hub(profile("team", "c1"))),
			want:   map[string]*corev1.Secret{"c1-multikueue": syncedCopy("team")},
		},
		"a token Secret without the agent's label is no token": {
			cached: withoutMSA(hub(append(yielding, profile("team", "c1"), upstreamCopy("team"))...)),
			live:   unlabelledToken(hub(profile("team", "c1"), upstreamCopy("team"))),
			want:   map[string]*corev1.Secret{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.Builder(tc.cached...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
			r := newTestReconciler(c, events.NewFakeRecorder(10))
			r.apiReader = fakeclient.New(tc.live...)
			r.upstream = coexistence.NewTwinWatchReading(coexistence.ManagedServiceAccountSyncer, coexistence.Trust{Namespaces: []string{"addons"}}, c, nil)

			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "c1"}}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			got := fakeclient.SecretsIn(t, c, "team")
			for _, s := range tc.want {
				s.ResourceVersion = ""
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Secrets in team (-want +got):\n%s", diff)
			}
		})
	}
}

// TestACopyJustCreatedIsNotCreatedAgainWhileTheCacheLags: a reconcile whose
// copies cache does not show the copy it has just created (another event on
// the key came first) sends nothing and comes back; once
// cachelag.Patience has passed with the cache still blind, it creates
// again, which the API server refuses harmlessly.
func TestACopyJustCreatedIsNotCreatedAgainWhileTheCacheLags(t *testing.T) {
	creates := 0
	c := fakeclient.Builder(scoped("team", profile("team", "c1"))...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				creates++
				return c.Create(ctx, obj, opts...)
			},
		}).Build()
	recorder := events.NewFakeRecorder(10)
	r := newTestReconciler(c, recorder)
	r.copies = noCopiesYet{}
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	r.created = cachelag.New(clock)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "c1"}}
	utiltesting.ExpectACreateWaitsForItsCache(t, clock, func() (ctrl.Result, error) { return r.Reconcile(context.Background(), req) },
		func() int { return creates }, func() []string { return utiltesting.DrainEvents(recorder) })
}

// noCopiesYet reads like a copies cache that has seen no copy yet.
type noCopiesYet struct{}

func (noCopiesYet) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
}

func (noCopiesYet) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }
