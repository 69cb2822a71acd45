package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func TestChurnScheduleIsSeeded(t *testing.T) {
	p := defaultChurnParams(2 * time.Minute)
	a, b := churnSchedule(7, 20, p), churnSchedule(7, 30, p)
	if diff := cmp.Diff(a, b[:20]); diff != "" {
		t.Errorf("the same seed drew other schedules for the first 20 clusters (-20 clusters +30 clusters):\n%s", diff)
	}
	if cmp.Equal(a, churnSchedule(8, 20, p)) {
		t.Error("another seed drew the same schedule")
	}
}

// TestChurnScheduleShape checks every cluster's schedule against what the
// phase promises: events in time order within the schedule, only changes
// below the significance rule and no flaps in the noise window, each flap
// recovered by the cluster's next event, and every scale event a change.
func TestChurnScheduleShape(t *testing.T) {
	p := defaultChurnParams(2 * time.Minute)
	rule := scaledRule(churnCompression)
	for i, s := range churnSchedule(1, 200, p) {
		nodes, available := s.Base, true
		for j, e := range s.Events {
			if e.At < 0 || e.At >= p.Duration || (j > 0 && e.At < s.Events[j-1].At) {
				t.Fatalf("cluster %d, event %d at %s: out of order or outside the schedule", i, j, e.At)
			}
			change := rule.Compare(facts(nodes), facts(e.Nodes))
			switch {
			case e.At < p.NoiseWindow && (e.Kind != scaleNoise || rule.Compare(facts(s.Base), facts(e.Nodes)) == damping.Significant):
				t.Errorf("cluster %d, event %d at %s: %+v in the noise window", i, j, e.At, e)
			case e.Kind == scaleNoise && change != damping.Insignificant:
				t.Errorf("cluster %d, event %d: noise %d → %d is %s", i, j, nodes, e.Nodes, change)
			case e.Kind == scaleSignificant && change != damping.Significant:
				t.Errorf("cluster %d, event %d: significant %d → %d is %s", i, j, nodes, e.Nodes, change)
			case e.Kind == flap && (!available || e.Available || e.Nodes != nodes):
				t.Errorf("cluster %d, event %d: flap %+v while available=%v with %d nodes", i, j, e, available, nodes)
			case e.Kind != flap && !e.Available:
				t.Errorf("cluster %d, event %d: scale event %+v leaves the cluster down", i, j, e)
			}
			nodes, available = e.Nodes, e.Available
		}
		if !available {
			t.Errorf("cluster %d ends down", i)
		}
	}
}

func facts(nodes int) map[string]string { return map[string]string{nodesClaim: strconv.Itoa(nodes)} }

// TestChurnScheduleRates checks the schedule's pace over many clusters: a
// scale event every ~3 s, every ~5th after the noise window significant, a
// flap every ~60 s after it.
func TestChurnScheduleRates(t *testing.T) {
	p := defaultChurnParams(10 * time.Minute)
	const clusters = 100
	counts := countEvents(churnSchedule(3, clusters, p), p.NoiseWindow, p.Duration)
	cases := map[string]struct {
		got, want float64
	}{
		"seconds between a cluster's scale events": {
			got:  (p.Duration - p.NoiseWindow).Seconds() * clusters / float64(counts.ScaleNoise+counts.ScaleSignificant),
			want: p.ScaleEvery.Seconds(),
		},
		"scale events per significant one": {
			got:  float64(counts.ScaleNoise+counts.ScaleSignificant) / float64(counts.ScaleSignificant),
			want: float64(p.SignificantEvery),
		},
		"seconds between a cluster's flaps": {
			got:  (p.Duration - p.NoiseWindow).Seconds() * clusters / float64(counts.Flaps),
			want: p.FlapEvery.Seconds(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.got < 0.8*tc.want || tc.got > 1.2*tc.want {
				t.Errorf("%.2f, want %.2f ± 20%%", tc.got, tc.want)
			}
		})
	}
}

func TestShardEvents(t *testing.T) {
	schedule := []clusterSchedule{
		{Events: []churnEvent{{At: 1 * time.Second}, {At: 4 * time.Second}, {At: 9 * time.Second}}},
		{Events: []churnEvent{{At: 2 * time.Second}, {At: 3 * time.Second, Kind: flap}}},
		{Events: []churnEvent{{At: 0}, {At: 4 * time.Second, Kind: scaleSignificant}}},
	}
	at := func(cluster int, d time.Duration, k churnKind) timedEvent {
		return timedEvent{cluster: cluster, churnEvent: churnEvent{At: d, Kind: k}}
	}
	cases := map[string]struct {
		shard, shards int
		from, to      time.Duration
		want          []timedEvent
	}{
		"one sender, all, in the order due": {shard: 0, shards: 1, to: 10 * time.Second, want: []timedEvent{
			at(2, 0, scaleNoise), at(0, 1*time.Second, scaleNoise), at(1, 2*time.Second, scaleNoise), at(1, 3*time.Second, flap),
			at(0, 4*time.Second, scaleNoise), at(2, 4*time.Second, scaleSignificant), at(0, 9*time.Second, scaleNoise),
		}},
		"first of two senders: clusters 0 and 2": {shard: 0, shards: 2, from: 1 * time.Second, to: 9 * time.Second, want: []timedEvent{
			at(0, 1*time.Second, scaleNoise), at(0, 4*time.Second, scaleNoise), at(2, 4*time.Second, scaleSignificant),
		}},
		"second of two senders: cluster 1": {shard: 1, shards: 2, to: 3 * time.Second, want: []timedEvent{
			at(1, 2*time.Second, scaleNoise),
		}},
		"a sender with no cluster": {shard: 3, shards: 4, to: 10 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := shardEvents(schedule, tc.shard, tc.shards, tc.from, tc.to)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(timedEvent{})); diff != "" {
				t.Errorf("shardEvents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWritesPerProfileHour(t *testing.T) {
	cases := map[string]struct {
		writes, profiles int
		real             time.Duration
		compression      int
		want             float64
	}{
		"one write per 30 s of a fleet's time": {writes: 40 * 10, profiles: 10, real: 2 * time.Minute, compression: 10, want: 120},
		"uncompressed":                         {writes: 60, profiles: 2, real: 30 * time.Minute, compression: 1, want: 60},
		"none":                                 {writes: 0, profiles: 10, real: time.Minute, compression: 10, want: 0},
		"no profiles":                          {writes: 5, profiles: 0, real: time.Minute, compression: 10, want: 0},
		"no time":                              {writes: 5, profiles: 1, real: 0, compression: 10, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, writesPerProfileHour(tc.writes, tc.profiles, tc.real, tc.compression)); diff != "" {
				t.Errorf("writesPerProfileHour (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuleFlags(t *testing.T) {
	cases := map[string]struct {
		rule damping.Rule
		want []string
	}{
		"the default budget, ten times faster": {rule: scaledRule(10), want: []string{
			"--facts-min-interval=3s", "--facts-significant-change=0.1", "--facts-refresh=6m0s", "--facts-settle=200ms",
		}},
		"off": {rule: damping.Off(), want: []string{"--facts-min-interval=0s"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ruleFlags(tc.rule)); diff != "" {
				t.Errorf("ruleFlags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyChurn(t *testing.T) {
	base := func() *clusterv1.ManagedCluster {
		return utiltesting.MakeManagedCluster("c1").Claim("region.open-cluster-management.io", "eu-west").
			Available(metav1.ConditionTrue).Joined().Obj()
	}
	cases := map[string]struct {
		cluster    *clusterv1.ManagedCluster
		event      churnEvent
		wantClaims []clusterv1.ManagedClusterClaim
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		"start state adds the node count": {
			cluster: base(), event: churnStart(clusterSchedule{Base: 40}),
			wantClaims: []clusterv1.ManagedClusterClaim{{Name: "region.open-cluster-management.io", Value: "eu-west"}, {Name: nodesClaim, Value: "40"}},
			wantStatus: metav1.ConditionTrue, wantReason: availableReason,
		},
		"a scale event changes it": {
			cluster: func() *clusterv1.ManagedCluster {
				c := base()
				applyChurn(c, churnEvent{Nodes: 40, Available: true})
				return c
			}(),
			event:      churnEvent{Kind: scaleNoise, Nodes: 41, Available: true},
			wantClaims: []clusterv1.ManagedClusterClaim{{Name: "region.open-cluster-management.io", Value: "eu-west"}, {Name: nodesClaim, Value: "41"}},
			wantStatus: metav1.ConditionTrue, wantReason: availableReason,
		},
		"a flap brings a reason of its own": {
			cluster: base(), event: churnEvent{Kind: flap, Nodes: 40, Flap: 3},
			wantClaims: []clusterv1.ManagedClusterClaim{{Name: "region.open-cluster-management.io", Value: "eu-west"}, {Name: nodesClaim, Value: "40"}},
			wantStatus: metav1.ConditionFalse, wantReason: "BenchFlap3",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			applyChurn(tc.cluster, tc.event)
			if diff := cmp.Diff(tc.wantClaims, tc.cluster.Status.ClusterClaims); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
			got := meta.FindStatusCondition(tc.cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			if diff := cmp.Diff([]string{string(tc.wantStatus), tc.wantReason}, []string{string(got.Status), got.Reason}); diff != "" {
				t.Errorf("Available condition (-want +got):\n%s", diff)
			}
			if meta.FindStatusCondition(tc.cluster.Status.Conditions, clusterv1.ManagedClusterConditionJoined) == nil {
				t.Error("the Joined condition is gone")
			}
		})
	}
}

func TestChurnNotes(t *testing.T) {
	kept := churnRun{Damped: true, Late: latencies{P99Millis: 20}, Churn: churnCounts{MeanQueueWaitMillis: 5}, WritesPerChange: 0.1}
	cases := map[string]struct {
		run  churnRun
		want int
	}{
		"damped, kept up":                 {run: kept},
		"undamped, every change written":  {run: churnRun{Late: kept.Late, WritesPerChange: 1}},
		"events dropped":                  {run: churnRun{Damped: true, Churn: churnCounts{Dropped: churnEvents{ScaleNoise: 1}}}, want: 1},
		"events sent late":                {run: churnRun{Damped: true, Late: latencies{P99Millis: 1500}}, want: 1},
		"a backlog in the mirror's queue": {run: churnRun{Damped: true, Churn: churnCounts{MeanQueueWaitMillis: 2000}}, want: 1},
		"undamped, changes coalesced":     {run: churnRun{WritesPerChange: 0.5}, want: 1},
		"undamped, behind in every way":   {run: churnRun{Late: latencies{P99Millis: 9000}, Churn: churnCounts{MeanQueueWaitMillis: 9000}, WritesPerChange: 0.2}, want: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := churnNotes(tc.run); len(got) != tc.want {
				t.Errorf("churnNotes = %q, want %d notes", got, tc.want)
			}
		})
	}
}
