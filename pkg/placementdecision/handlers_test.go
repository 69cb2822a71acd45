package placementdecision

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func TestMapper(t *testing.T) {
	gpus, cpus := testPlacement(), &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cpus", UID: "uid-2"}}
	elsewhere := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "gpus", UID: "uid-3"}}
	gpusDecision, cpusDecision := ocmDecision(gpus, 1, 0, "c1", "c2"), ocmDecision(cpus, 1, 0, "c2")
	elsewhereDecision := ocmDecision(elsewhere, 1, 0, "c1")
	c := fakeclient.Builder(gpus, cpus, elsewhere, &gpusDecision, &cpusDecision, &elsewhereDecision,
		utiltesting.MakeBinding("team", "prod").Obj(), utiltesting.MakeBinding("other", "dev").Obj()).
		WithIndex(&clusterv1beta1.PlacementDecision{}, ChosenClusterKey, chosenClusters).Build()
	m := mapper{client: c, holds: newHolds(), clock: clocktesting.NewFakePassiveClock(testNow)}
	request := func(namespace, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
	}
	cases := map[string]struct {
		mapped []reconcile.Request
		want   []reconcile.Request
	}{
		"OCM's decision: its Placement": {
			mapped: m.ofDecision(context.Background(), &gpusDecision),
			want:   []reconcile.Request{request("team", "gpus")},
		},
		"a slice: the Placement its placement-key names": {
			mapped: m.ofSlice(context.Background(), wantSlice(0)),
			want:   []reconcile.Request{request("team", "gpus")},
		},
		"a slice with no placement-key: none": {
			mapped: m.ofSlice(context.Background(), &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "x"}}),
		},
		"a profile: the Placements of its namespace that chose its cluster": {
			mapped: m.ofProfile(context.Background(), utiltesting.MakeClusterProfile("team", "c1", testManager).Obj()),
			want:   []reconcile.Request{request("team", "gpus")},
		},
		"a cluster: every Placement that chose it": {
			mapped: m.ofCluster(context.Background(), utiltesting.MakeManagedCluster("c1").Obj()),
			want:   []reconcile.Request{request("other", "gpus"), request("team", "gpus")},
		},
		"a binding: the Placements of its namespace": {
			mapped: m.ofNamespace(context.Background(), utiltesting.MakeBinding("team", "prod").Obj()),
			want:   []reconcile.Request{request("team", "cpus"), request("team", "gpus")},
		},
		"a namespace: its Placements": {
			mapped: m.ofNamespace(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}),
			want:   []reconcile.Request{request("other", "gpus")},
		},
		"a set: the Placements of the namespaces that bind it": {
			mapped: m.ofSet(context.Background(), utiltesting.MakeClusterSet("dev").Obj()),
			want:   []reconcile.Request{request("other", "gpus")},
		},
		"a ClusterManager: every Placement": {
			mapped: m.all(context.Background(), nil),
			want:   []reconcile.Request{request("other", "gpus"), request("team", "cpus"), request("team", "gpus")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.mapped, cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b reconcile.Request) bool {
				return a.String() < b.String()
			})); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAProfileEventTouchesTheHoldsOfThePlacementsThatChoseItsCluster: the
// mapper notes the event on the hold of a held Placement that chose the
// profile's cluster, and keeps no hold for one not held.
func TestAProfileEventTouchesTheHoldsOfThePlacementsThatChoseItsCluster(t *testing.T) {
	gpus, cpus := testPlacement(), &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cpus", UID: "uid-2"}}
	gpusDecision, cpusDecision := ocmDecision(gpus, 1, 0, "c1"), ocmDecision(cpus, 1, 0, "c1")
	c := fakeclient.Builder(gpus, cpus, &gpusDecision, &cpusDecision).
		WithIndex(&clusterv1beta1.PlacementDecision{}, ChosenClusterKey, chosenClusters).Build()
	clock := clocktesting.NewFakePassiveClock(testNow)
	m := mapper{client: c, holds: newHolds(), clock: clock}
	gpusKey := client.ObjectKeyFromObject(gpus)
	m.holds.byPlacement[gpusKey] = hold{progressed: testNow, looked: testNow, referenced: 1}
	clock.SetTime(testNow.Add(time.Second))
	m.ofProfile(context.Background(), utiltesting.MakeClusterProfile("team", "c1", testManager).Obj())
	want := map[types.NamespacedName]hold{gpusKey: {progressed: testNow, looked: testNow, touched: testNow.Add(time.Second), referenced: 1}}
	if diff := cmp.Diff(want, m.holds.byPlacement, cmp.AllowUnexported(hold{})); diff != "" {
		t.Errorf("holds (-want +got):\n%s", diff)
	}
}

func TestChosenClustersIndex(t *testing.T) {
	pd := ocmDecision(testPlacement(), 1, 0, "c2", "", "c1", "c2")
	if diff := cmp.Diff([]string{"c1", "c2"}, chosenClusters(&pd)); diff != "" {
		t.Errorf("index values (-want +got):\n%s", diff)
	}
	if got := chosenClusters(&corev1.Secret{}); got != nil {
		t.Errorf("index values of another type: %q", got)
	}
}

// TestPredicates: a profile matters when it comes, goes or starts going; a
// ClusterManager when it turns OCM's own writer on or off.
func TestPredicates(t *testing.T) {
	profile := utiltesting.MakeClusterProfile("team", "c1", testManager).Obj()
	deleting := profile.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	relabelled := profile.DeepCopy()
	relabelled.Labels["env"] = "prod"
	off := &operatorv1.ClusterManager{}
	on := &operatorv1.ClusterManager{Spec: operatorv1.ClusterManagerSpec{PlacementConfiguration: &operatorv1.PlacementConfiguration{
		FeatureGates: []operatorv1.FeatureGate{{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}}}}}
	otherGate := &operatorv1.ClusterManager{Spec: operatorv1.ClusterManagerSpec{PlacementConfiguration: &operatorv1.PlacementConfiguration{
		FeatureGates: []operatorv1.FeatureGate{{Feature: "PlacementDebugServer", Mode: operatorv1.FeatureGateModeTypeEnable}}}}}
	cases := map[string]struct {
		passes bool
		want   bool
	}{
		"a profile created":                {profileLifecycle().Create(event.CreateEvent{Object: profile}), true},
		"a profile deleted":                {profileLifecycle().Delete(event.DeleteEvent{Object: profile}), true},
		"a profile starts going":           {profileLifecycle().Update(event.UpdateEvent{ObjectOld: profile, ObjectNew: deleting}), true},
		"a profile relabelled":             {profileLifecycle().Update(event.UpdateEvent{ObjectOld: profile, ObjectNew: relabelled}), false},
		"OCM's writer turned on":           {upstreamSwitched().Update(event.UpdateEvent{ObjectOld: off, ObjectNew: on}), true},
		"OCM's writer turned off":          {upstreamSwitched().Update(event.UpdateEvent{ObjectOld: on, ObjectNew: off}), true},
		"another placement gate turned on": {upstreamSwitched().Update(event.UpdateEvent{ObjectOld: off, ObjectNew: otherGate}), false},
	}
	for name, tc := range cases {
		if tc.passes != tc.want {
			t.Errorf("%s: passes = %v, want %v", name, tc.passes, tc.want)
		}
	}
}
