package placementdecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// stored is a slice as read back: what was applied, plus what the API
// server and others add.
func stored(s *cpv1alpha1.PlacementDecision) cpv1alpha1.PlacementDecision {
	out := *s.DeepCopy()
	out.UID, out.ResourceVersion = types.UID("stored-"+s.Name), "7"
	out.Labels["team.example/owner"] = "someone"
	return out
}

func TestPlan(t *testing.T) {
	three := wantSlices(clusterNames(250))
	changedDecision := stored(three[1])
	changedDecision.Decisions[3].Reason = "edited"
	otherOwner := stored(three[0])
	otherOwner.OwnerReferences[0].UID = "uid-of-an-earlier-placement"
	relabelled := stored(three[2])
	relabelled.Labels["multicluster.x-k8s.io/decision-index"] = "7"
	deleting := stored(three[2])
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	cases := map[string]struct {
		existing []cpv1alpha1.PlacementDecision
		desired  []*cpv1alpha1.PlacementDecision
		want     Plan
	}{
		"as wanted: no write (others' labels are theirs)": {
			existing: []cpv1alpha1.PlacementDecision{stored(three[0]), stored(three[1]), stored(three[2])},
			desired:  three,
		},
		"none yet: one apply per slice": {
			desired: three,
			want:    Plan{Apply: three},
		},
		"one decision changed: that slice alone": {
			existing: []cpv1alpha1.PlacementDecision{stored(three[0]), changedDecision, stored(three[2])},
			desired:  three,
			want:     Plan{Apply: three[1:2]},
		},
		"an earlier Placement's slice of the name, and a changed label: those": {
			existing: []cpv1alpha1.PlacementDecision{otherOwner, stored(three[1]), relabelled},
			desired:  three,
			want:     Plan{Apply: []*cpv1alpha1.PlacementDecision{three[0], three[2]}},
		},
		"fewer slices wanted: the rest deleted": {
			existing: []cpv1alpha1.PlacementDecision{stored(three[2]), stored(three[0]), stored(three[1])},
			desired:  three[:1],
			want:     Plan{Delete: []*cpv1alpha1.PlacementDecision{ptr.To(stored(three[1])), ptr.To(stored(three[2]))}},
		},
		"nothing wanted: every slice deleted": {
			existing: []cpv1alpha1.PlacementDecision{stored(three[0])},
			want:     Plan{Delete: []*cpv1alpha1.PlacementDecision{ptr.To(stored(three[0]))}},
		},
		"a slice being deleted is left to go, then made again": {
			existing: []cpv1alpha1.PlacementDecision{stored(three[0]), stored(three[1]), deleting},
			desired:  three,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, plan(tc.existing, tc.desired)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHoldWrite(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	lacking := func(referenced ...string) Desired {
		return Desired{Slices: []*cpv1alpha1.PlacementDecision{wantSlice(0, referenced...)}, LeftOut: map[string][]string{LeftOutNoProfile: {"c9"}}}
	}
	held := hold{progressed: start.Add(time.Second), referenced: 1}
	cases := map[string]struct {
		held     hold
		holding  bool
		existing []cpv1alpha1.PlacementDecision
		desired  Desired
		now      time.Time
		want     hold
		wantOK   bool
		wantWait time.Duration
	}{
		"no profile lacking: now": {
			desired: Desired{Slices: []*cpv1alpha1.PlacementDecision{wantSlice(0, "c1")}, LeftOut: map[string][]string{LeftOutUnpublished: {"c9"}}},
			now:     start,
		},
		"a reference dropped: now": {
			existing: []cpv1alpha1.PlacementDecision{stored(wantSlice(0, "c1", "c2"))}, desired: lacking("c1"), now: start,
		},
		"a hold begins": {
			desired: lacking("c1"), now: start,
			want: hold{progressed: start, looked: start, referenced: 1}, wantOK: true, wantWait: settleFor,
		},
		"only adds to what is there: a hold begins": {
			existing: []cpv1alpha1.PlacementDecision{stored(wantSlice(0, "c1"))}, desired: lacking("c1", "c2"), now: start,
			want: hold{progressed: start, looked: start, referenced: 2}, wantOK: true, wantWait: settleFor,
		},
		"a profile more: settleFor again": {
			held: held, holding: true, desired: lacking("c1", "c2"), now: start.Add(3 * time.Second),
			want: hold{progressed: start.Add(3 * time.Second), looked: start.Add(3 * time.Second), referenced: 2}, wantOK: true, wantWait: settleFor,
		},
		"none more: the rest of settleFor": {
			held: held, holding: true, desired: lacking("c1"), now: start.Add(3 * time.Second),
			want: hold{progressed: start.Add(time.Second), looked: start.Add(3 * time.Second), referenced: 1}, wantOK: true, wantWait: 3 * time.Second,
		},
		"none more for settleFor: now": {
			held: held, holding: true, desired: lacking("c1"), now: start.Add(time.Second + settleFor),
		},
		"profiles still appearing an hour on (a cold start slower than any fixed bound): settleFor again": {
			held: hold{progressed: start.Add(time.Hour - time.Second), looked: start.Add(time.Hour - time.Second), referenced: 500}, holding: true,
			desired: lacking(clusterNames(501)...), now: start.Add(time.Hour),
			want: hold{progressed: start.Add(time.Hour), looked: start.Add(time.Hour), referenced: 501}, wantOK: true, wantWait: settleFor,
		},
		"an hour on, none more for settleFor: now": {
			held: hold{progressed: start.Add(time.Hour), referenced: 501}, holding: true,
			desired: lacking(clusterNames(501)...), now: start.Add(time.Hour + settleFor),
		},
		"grown, with a profile event since the last look: grew at the event, held for the rest of settleFor": {
			held: hold{progressed: start, looked: start, touched: start.Add(3 * time.Second), referenced: 1}, holding: true,
			desired: lacking("c1", "c2"), now: start.Add(6 * time.Second),
			want:   hold{progressed: start.Add(3 * time.Second), looked: start.Add(6 * time.Second), touched: start.Add(3 * time.Second), referenced: 2},
			wantOK: true, wantWait: 2 * time.Second,
		},
		"grown, the last profile event settleFor ago: now": {
			held: hold{progressed: start, looked: start, touched: start.Add(time.Second), referenced: 1}, holding: true,
			desired: lacking("c1", "c2"), now: start.Add(time.Second + settleFor),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok, wait := holdWrite(tc.held, tc.holding, tc.existing, tc.desired, tc.now)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(hold{})); diff != "" || ok != tc.wantOK || wait != tc.wantWait {
				t.Errorf("holdWrite = (%v, %s), want (%v, %s); hold (-want +got):\n%s", ok, wait, tc.wantOK, tc.wantWait, diff)
			}
		})
	}
}

func TestThrottled(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "team", Name: "gpus"}
	cases := map[string]struct {
		held *hold
		now  time.Time
		want time.Duration
	}{
		"not held: look now": {now: start},
		"looked a second ago: the rest of lookEvery": {
			held: &hold{looked: start}, now: start.Add(time.Second), want: lookEvery - time.Second,
		},
		"looked lookEvery ago: look now": {
			held: &hold{looked: start}, now: start.Add(lookEvery),
		},
		"a profile event a second ago: not before settleFor after it": {
			held: &hold{looked: start, touched: start.Add(3 * time.Second)}, now: start.Add(4 * time.Second), want: settleFor - time.Second,
		},
		"the last profile event settleFor ago: look now": {
			held: &hold{looked: start, touched: start.Add(time.Second)}, now: start.Add(time.Second + settleFor),
		},
		"profile events for lookAtLeastEvery since the last look: look now": {
			held: &hold{looked: start, touched: start.Add(lookAtLeastEvery)}, now: start.Add(lookAtLeastEvery),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHolds()
			if tc.held != nil {
				h.byPlacement[key] = *tc.held
			}
			if got := h.throttled(key, tc.now); got != tc.want {
				t.Errorf("throttled = %s, want %s", got, tc.want)
			}
		})
	}
}
