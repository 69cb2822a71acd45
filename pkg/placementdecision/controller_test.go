package placementdecision

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// teamWorld is a hub where namespace team binds set prod, which picks c1
// and c2, and holds c1's profile; c3 is in no set team binds. The
// Placement gpus chose c1, c2 and c3.
func teamWorld(extra ...client.Object) []client.Object {
	placement := testPlacement()
	pd := ocmDecision(placement, 1, 0, "c1", "c2", "c3")
	return append([]client.Object{
		utiltesting.MakeManagedCluster("c1").ClusterSet("prod").Obj(),
		utiltesting.MakeManagedCluster("c2").ClusterSet("prod").Obj(),
		utiltesting.MakeManagedCluster("c3").ClusterSet("dev").Obj(),
		utiltesting.MakeClusterSet("prod").Obj(),
		utiltesting.MakeClusterSet("dev").Obj(),
		utiltesting.NamespaceObj("team"),
		utiltesting.MakeBinding("team", "prod").Bound(true).Obj(),
		utiltesting.MakeClusterProfile("team", "c1", testManager).Obj(),
		placement, &pd,
	}, extra...)
}

// ours is a slice as this capability stored it.
func ours(s *cpv1alpha1.PlacementDecision) *cpv1alpha1.PlacementDecision {
	s.ResourceVersion = "5"
	return s
}

func TestReconcile(t *testing.T) {
	leftOutEvent := "Warning PlacementDecisionClustersLeftOut The PlacementDecision slices leave out chosen clusters whose ClusterProfile is not " +
		"published in this namespace, so that every reference resolves: c2 (published here, but its ClusterProfile is not there yet); " +
		"c3 (not published in this namespace: no binding here publishes a set that picks it, or the binding opts out)"
	forged := wantSlice(8, "c9")
	cases := map[string]struct {
		objects    []client.Object
		want       []*cpv1alpha1.PlacementDecision
		wantEvents []string
	}{
		"only the clusters whose profile is there are referenced; the others are reported": {
			objects:    teamWorld(),
			want:       []*cpv1alpha1.PlacementDecision{wantSlice(0, "c1")},
			wantEvents: []string{leftOutEvent},
		},
		"a slice labelled for the Placement that is not wanted is deleted": {
			objects:    teamWorld(ours(forged)),
			want:       []*cpv1alpha1.PlacementDecision{wantSlice(0, "c1")},
			wantEvents: []string{leftOutEvent},
		},
		"the binding gone: the slices go": {
			objects: append(withoutNamed(teamWorld(), "prod"), ours(wantSlice(0, "c1"))),
		},
		"the Placement gone: the slices go": {
			objects: append(withoutNamed(teamWorld(), "gpus"), ours(wantSlice(0, "c1"))),
		},
		"OCM's own writer on: nothing written": {
			objects: teamWorld(ours(forged), &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"},
				Spec: operatorv1.ClusterManagerSpec{PlacementConfiguration: &operatorv1.PlacementConfiguration{
					FeatureGates: []operatorv1.FeatureGate{{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}}}}}),
			want: []*cpv1alpha1.PlacementDecision{forged},
			wantEvents: []string{"Warning YieldingToUpstream OCM's placement controller's SIGPlacementDecision gate is enabled; " +
				"clusterprofile-manager writes no PlacementDecision slice until it is disabled"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.New(tc.objects...)
			recorder := events.NewFakeRecorder(10)
			r := &Reconciler{client: c, slices: labelledOurs{c}, apiReader: c, recorder: recorder, managerName: testManager,
				upstream: &coexistence.Guard{Reader: c, Recorder: recorder, BuiltIn: &builtInWriter}, reports: reportonce.New(), leftOut: newLeftOutCounts()}
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}

			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			if diff := cmp.Diff(tc.want, slicesIn(t, c, "team"), cmpopts.EquateEmpty(),
				cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")); diff != "" {
				t.Errorf("slices in team (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, utiltesting.DrainEvents(recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcileReportsOncePerChange: the left-out clusters are reported
// when they change, and once more when none is left out.
func TestReconcileReportsOncePerChange(t *testing.T) {
	c := fakeclient.New(teamWorld()...)
	recorder := events.NewFakeRecorder(10)
	r := &Reconciler{client: c, slices: labelledOurs{c}, apiReader: c, recorder: recorder, managerName: testManager,
		upstream: &coexistence.Guard{BuiltIn: &builtInWriter}, reports: reportonce.New(), leftOut: newLeftOutCounts()}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}
	reconcile := func() []string {
		t.Helper()
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		return utiltesting.DrainEvents(recorder)
	}
	if got := reconcile(); len(got) != 1 {
		t.Fatalf("first reconcile's events: %q, want the left-out report", got)
	}
	if got := reconcile(); len(got) != 0 {
		t.Errorf("a second reconcile reported again: %q", got)
	}
	pd := &clusterv1beta1.PlacementDecision{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "team", Name: "gpus-decision-1"}, pd); err != nil {
		t.Fatal(err)
	}
	pd.Status.Decisions = pd.Status.Decisions[:1]
	if err := c.Update(context.Background(), pd); err != nil {
		t.Fatal(err)
	}
	want := []string{"Normal PlacementDecisionClustersReferenced The PlacementDecision slices reference every cluster the Placement chose."}
	if diff := cmp.Diff(want, reconcile()); diff != "" {
		t.Errorf("events once none is left out (-want +got):\n%s", diff)
	}
}

// labelledOurs reads like the cache of slices, which holds only those
// labelled with the cluster manager's name.
type labelledOurs struct{ client.Reader }

func (l labelledOurs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return l.Reader.List(ctx, list, append(opts, client.MatchingLabels{cpv1alpha1.LabelClusterManagerKey: testManager})...)
}

// withoutNamed drops the object named name (a binding, the Placement).
func withoutNamed(objects []client.Object, name string) []client.Object {
	var out []client.Object
	for _, o := range objects {
		if o.GetName() != name {
			out = append(out, o)
		}
	}
	return out
}

func slicesIn(t *testing.T, c client.Reader, namespace string) []*cpv1alpha1.PlacementDecision {
	t.Helper()
	list := &cpv1alpha1.PlacementDecisionList{}
	if err := c.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var out []*cpv1alpha1.PlacementDecision
	for i := range list.Items {
		s := &list.Items[i]
		s.TypeMeta = metav1.TypeMeta{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "PlacementDecision"}
		out = append(out, s)
	}
	return out
}
