package placementdecision

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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

// testNow is the reconcilers' clock when a test starts.
var testNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// newTestReconciler is the reconciler over c, its clock at testNow.
func newTestReconciler(c client.Client, recorder events.EventRecorder) (*Reconciler, *clocktesting.FakePassiveClock) {
	clock := clocktesting.NewFakePassiveClock(testNow)
	return &Reconciler{client: c, slices: labelledOurs{c}, apiReader: c, recorder: recorder, managerName: testManager,
		upstream: &coexistence.Guard{Reader: c, Recorder: recorder, BuiltIn: &builtInWriter}, reports: reportonce.New(),
		leftOut: newLeftOutCounts(), holds: newHolds(), clock: clock}, clock
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
		// wantWaits are the holds before the write (holdWrite).
		wantWaits []time.Duration
	}{
		"only the clusters whose profile is there are referenced, once no profile appeared for settleFor; the others are reported": {
			objects:    teamWorld(),
			want:       []*cpv1alpha1.PlacementDecision{wantSlice(0, "c1")},
			wantEvents: []string{leftOutEvent},
			wantWaits:  []time.Duration{settleFor},
		},
		"a slice that drops a reference is written at once, though a profile lacks": {
			objects:    teamWorld(ours(wantSlice(0, "c1", "c9"))),
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
			r, clock := newTestReconciler(c, recorder)
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}

			// Reconcile as the queue would: again once each hold is over.
			var waits []time.Duration
			for {
				result, err := r.Reconcile(context.Background(), req)
				if err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
				if result.RequeueAfter == 0 {
					break
				}
				if len(waits) > 0 && len(slicesIn(t, c, "team")) > 0 {
					t.Fatalf("held after a write")
				}
				waits = append(waits, result.RequeueAfter)
				clock.SetTime(clock.Now().Add(result.RequeueAfter))
			}
			if diff := cmp.Diff(tc.wantWaits, waits, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("holds (-want +got):\n%s", diff)
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
	r, clock := newTestReconciler(c, recorder)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}
	reconcile := func() []string {
		t.Helper()
		result, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		clock.SetTime(clock.Now().Add(result.RequeueAfter))
		return utiltesting.DrainEvents(recorder)
	}
	if got := reconcile(); len(got) != 0 {
		t.Fatalf("events while the slices are held: %q", got)
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

// countingClient is a fake client over objs that counts the patches (the
// slices' writes) and the reads sent through it.
func countingClient(objs ...client.Object) (c client.Client, writes, reads *int) {
	writes, reads = new(int), new(int)
	c = fakeclient.Builder(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			*writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			*reads++
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	return c, writes, reads
}

// TestReconcileHoldsWhileProfilesAppear: while the profiles of the chosen
// clusters appear one by one (the mirror publishing a fleet), the slices
// are held, and written once, complete, when the last appears; nothing is
// reported meanwhile.
func TestReconcileHoldsWhileProfilesAppear(t *testing.T) {
	placement := testPlacement()
	pd := ocmDecision(placement, 1, 0, "c1", "c2", "c3")
	c, writes, _ := countingClient(
		utiltesting.MakeManagedCluster("c1").ClusterSet("prod").Obj(),
		utiltesting.MakeManagedCluster("c2").ClusterSet("prod").Obj(),
		utiltesting.MakeManagedCluster("c3").ClusterSet("prod").Obj(),
		utiltesting.MakeClusterSet("prod").Obj(),
		utiltesting.NamespaceObj("team"),
		utiltesting.MakeBinding("team", "prod").Bound(true).Obj(),
		placement, &pd,
	)
	recorder := events.NewFakeRecorder(10)
	r, clock := newTestReconciler(c, recorder)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}
	steps := []struct {
		name     string
		after    time.Duration
		profiles []string
		wantWait time.Duration
	}{
		{"no profile yet: held", 0, nil, settleFor},
		{"c1's appears: held for settleFor again", 2 * time.Second, []string{"c1"}, settleFor},
		{"none since: the rest of settleFor", 2 * time.Second, nil, 3 * time.Second},
		{"c2's appears within lookEvery of the last look: not looked at yet", time.Second, []string{"c2"}, time.Second},
		{"c3's appears: written", time.Second, []string{"c3"}, 0},
	}
	for _, step := range steps {
		clock.SetTime(clock.Now().Add(step.after))
		for _, name := range step.profiles {
			if err := c.Create(context.Background(), utiltesting.MakeClusterProfile("team", name, testManager).Obj()); err != nil {
				t.Fatal(err)
			}
		}
		result, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: Reconcile: %v", step.name, err)
		}
		if result.RequeueAfter != step.wantWait {
			t.Errorf("%s: RequeueAfter = %s, want %s", step.name, result.RequeueAfter, step.wantWait)
		}
		if step.wantWait > 0 && (*writes > 0 || len(utiltesting.DrainEvents(recorder)) > 0) {
			t.Fatalf("%s: written or reported while held", step.name)
		}
	}
	if diff := cmp.Diff([]*cpv1alpha1.PlacementDecision{wantSlice(0, "c1", "c2", "c3")}, slicesIn(t, c, "team"),
		cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
	if *writes != 1 {
		t.Errorf("%d writes, want 1", *writes)
	}
}

// TestReconcileHoldsThroughASlowColdStart: a fleet whose profiles keep
// appearing for longer than any fixed bound would allow (200 profiles, one
// every 4 s: over 13 minutes) still gets its slices written once, settleFor
// after the last appears; while they appear, the profile events (which the
// mapper notes on the hold) spare the Placement all but one look a minute.
func TestReconcileHoldsThroughASlowColdStart(t *testing.T) {
	placement := testPlacement()
	clusters := clusterNames(200)
	objs := []client.Object{utiltesting.MakeClusterSet("prod").Obj(), utiltesting.NamespaceObj("team"),
		utiltesting.MakeBinding("team", "prod").Bound(true).Obj(), placement}
	for _, name := range clusters {
		objs = append(objs, utiltesting.MakeManagedCluster(name).ClusterSet("prod").Obj())
	}
	for _, pd := range ocmDecisions(placement, clusters) {
		objs = append(objs, &pd)
	}
	c, writes, reads := countingClient(objs...)
	r, clock := newTestReconciler(c, events.NewFakeRecorder(10))
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}
	looks := 0
	reconcile := func(what string) time.Duration {
		before := *reads
		result, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: Reconcile: %v", what, err)
		}
		if *reads > before {
			looks++
		}
		return result.RequeueAfter
	}
	for i, name := range clusters {
		clock.SetTime(clock.Now().Add(4 * time.Second))
		if err := c.Create(context.Background(), utiltesting.MakeClusterProfile("team", name, testManager).Obj()); err != nil {
			t.Fatal(err)
		}
		r.holds.touch(req.NamespacedName, clock.Now()) // as the mapper's ofProfile does
		if wait := reconcile(name); wait <= 0 || wait > settleFor {
			t.Fatalf("profile %d, %s after the first: RequeueAfter = %s, want held for at most %s", i, 4*time.Second*time.Duration(i), wait, settleFor)
		}
	}
	clock.SetTime(clock.Now().Add(settleFor))
	if wait := reconcile("settleFor after the last"); wait != 0 {
		t.Fatalf("settleFor after the last profile: RequeueAfter = %s, want 0", wait)
	}
	if diff := cmp.Diff(wantSlices(clusters), slicesIn(t, c, "team"),
		cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
	// A look when the hold begins, one every lookAtLeastEvery, and the last.
	publishing := 4 * time.Second * time.Duration(len(clusters))
	if maxLooks := 2 + int(publishing/lookAtLeastEvery); *writes != 2 || looks > maxLooks {
		t.Errorf("%d writes and %d looks, want 2 (one per slice) and at most %d", *writes, looks, maxLooks)
	}
}

// TestProfileEventsThatAddNothingDoNotKeepAHold: profile events that bring
// no new reference (anyone allowed to may create and delete ClusterProfiles
// in the namespace, one a second here) hold the slices back no longer than
// the next forced look, lookAtLeastEvery after the last.
func TestProfileEventsThatAddNothingDoNotKeepAHold(t *testing.T) {
	c, writes, _ := countingClient(teamWorld()...)
	r, clock := newTestReconciler(c, events.NewFakeRecorder(10))
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}
	start := clock.Now()
	for *writes == 0 && clock.Since(start) < 3*time.Minute {
		r.holds.touch(req.NamespacedName, clock.Now())
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		clock.SetTime(clock.Now().Add(time.Second))
	}
	if held := clock.Since(start) - time.Second; *writes != 1 || held > lookAtLeastEvery {
		t.Errorf("%d writes after %s of profile events, want 1 within %s", *writes, held, lookAtLeastEvery)
	}
}

// TestAHeldPlacementDeletedLeavesNoHold: a Placement deleted while its
// slices are held keeps no hold in memory once looked at again.
func TestAHeldPlacementDeletedLeavesNoHold(t *testing.T) {
	c := fakeclient.New(teamWorld()...)
	r, clock := newTestReconciler(c, events.NewFakeRecorder(10))
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gpus"}}
	if result, err := r.Reconcile(context.Background(), req); err != nil || result.RequeueAfter != settleFor {
		t.Fatalf("Reconcile = %v, %v; want held for %s", result, err, settleFor)
	}
	if err := c.Delete(context.Background(), testPlacement()); err != nil {
		t.Fatal(err)
	}
	clock.SetTime(clock.Now().Add(lookEvery))
	if result, err := r.Reconcile(context.Background(), req); err != nil || result.RequeueAfter != 0 {
		t.Fatalf("Reconcile = %v, %v; want done", result, err)
	}
	if len(r.holds.byPlacement) != 0 {
		t.Errorf("holds kept: %v", r.holds.byPlacement)
	}
}
