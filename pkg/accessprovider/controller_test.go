package accessprovider

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
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

// TestReconcile runs the generic reconciler with the direct source against a
// fake client carrying the production indexes: the entry goes on the profile
// the hub publishes, and on no other, whatever its labels.
func TestReconcile(t *testing.T) {
	theirs := cpv1alpha1.AccessProvider{Name: "theirs", Cluster: clientcmdv1.Cluster{Server: "https://elsewhere"}}
	cases := map[string]struct {
		profile    *cpv1alpha1.ClusterProfile
		wantStatus cpv1alpha1.ClusterProfileStatus
		wantWrite  bool
	}{
		"a published profile gets the entry, others' entries kept": {
			profile:    withEntries(utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(), theirs),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{theirs, directEntry()}},
			wantWrite:  true,
		},
		"an up-to-date profile costs nothing": {
			profile:    withEntries(utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(), directEntry()),
			wantStatus: cpv1alpha1.ClusterProfileStatus{AccessProviders: []cpv1alpha1.AccessProvider{directEntry()}},
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
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := fakeclient.New(append(servedWorld(), tc.profile)...)
			before := &cpv1alpha1.ClusterProfile{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.profile), before); err != nil {
				t.Fatal(err)
			}
			r := NewReconciler(c, &Direct{Reader: c, Name: "direct"}, testManager, nil)

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

func TestReconcileOfAProfileThatIsGone(t *testing.T) {
	c := fakeclient.New(servedWorld()...)
	r := NewReconciler(c, &Direct{Reader: c, Name: "direct"}, testManager, nil)
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
	r := NewReconciler(c, &Direct{Reader: c, Name: "direct"}, testManager, mirrorDeleting{key: true})
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
			r := NewReconciler(c, &Direct{Reader: c, Name: "direct"}, testManager, deletions)
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
