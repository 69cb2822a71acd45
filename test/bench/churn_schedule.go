package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// The churn phase's schedule: when each cluster scales and when its
// Available condition flaps. It is drawn from a seed, so that the manager
// with the write budget and the one without see the same churn.

const (
	// churnCompression is how much faster than a fleet's clock the churn
	// runs, so that a run of minutes covers the write budget's intervals:
	// a scale event every 30 s of a fleet's time comes every 3 s, and the
	// damped manager's budget is the default one divided by the same factor.
	churnCompression = 10
	// kepWritesPerHour is KEP-4322's budget for a producer: at most one
	// status update per 30 s per profile.
	kepWritesPerHour = 120
	// nodesClaim is the numeric claim the churn moves; the world's own
	// claims are all text.
	nodesClaim = "nodes.bench"
	// availableReason is the Available condition's reason while a cluster
	// is up, as OCM's registration controller sets it.
	availableReason = "ManagedClusterAvailable"
	// minChurn is the shortest churn worth running: a few scale events
	// per cluster after the noise window.
	minChurn = 20 * time.Second
)

// churnParams shape the schedule; the times are the benchmark's (real).
type churnParams struct {
	// Duration is the schedule's length; NoiseWindow its leading part, in
	// which clusters only move by a node at a time and never flap.
	Duration, NoiseWindow time.Duration
	// ScaleEvery is the mean time between a cluster's scale events, each
	// ScaleEvery × [1-Jitter, 1+Jitter] after the last.
	ScaleEvery time.Duration
	Jitter     float64
	// SignificantEvery: about every n-th scale event after the noise window
	// moves the node count by SignificantFraction; the others by one node.
	SignificantEvery    int
	SignificantFraction float64
	// FlapEvery is the mean time between a cluster's condition flaps.
	FlapEvery time.Duration
	// BaseNodes is the mean node count; a cluster's own lies within ±10%.
	BaseNodes int
}

// defaultChurnParams is a busy fleet in compressed time: a scale event
// every 30 s and a flap every 10 min of the fleet's time.
func defaultChurnParams(duration time.Duration) churnParams {
	return churnParams{
		Duration: duration, NoiseWindow: noiseWindow(duration),
		ScaleEvery: 3 * time.Second, Jitter: 0.5,
		SignificantEvery: 5, SignificantFraction: 0.25,
		FlapEvery: time.Minute,
		BaseNodes: 40,
	}
}

// noiseWindow is the leading part of a schedule of d with noise only: 30 s,
// or a quarter of a shorter schedule.
func noiseWindow(d time.Duration) time.Duration { return min(30*time.Second, d/4) }

// churnKind is what a churn event changes.
type churnKind int

const (
	// scaleNoise moves the node count by one, below the significance rule.
	scaleNoise churnKind = iota
	// scaleSignificant moves it by SignificantFraction.
	scaleSignificant
	// flap sets the Available condition False; the cluster's next scale
	// event sets it True again.
	flap
)

// churnEvent is one status update of one cluster.
type churnEvent struct {
	// At is the time since the schedule's start.
	At   time.Duration
	Kind churnKind
	// Nodes is the node count after the event.
	Nodes int
	// Available is the Available condition's status after the event.
	Available bool
	// Flap numbers the cluster's flaps, so that each brings a new reason.
	Flap int
}

// clusterSchedule is one cluster's churn.
type clusterSchedule struct {
	// Base is the node count the cluster starts from.
	Base   int
	Events []churnEvent
}

// churnSchedule draws every cluster's churn from seed; cluster i's does not
// depend on how many clusters there are.
func churnSchedule(seed uint64, clusters int, p churnParams) []clusterSchedule {
	out := make([]clusterSchedule, clusters)
	for i := range out {
		out[i] = scheduleCluster(rand.New(rand.NewPCG(seed, uint64(i))), p)
	}
	return out
}

// scheduleCluster draws one cluster's scale events and flaps. Every flap
// comes between two scale events, so the cluster is up when the schedule
// ends.
func scheduleCluster(rng *rand.Rand, p churnParams) clusterSchedule {
	spread := p.BaseNodes / 10
	s := clusterSchedule{Base: p.BaseNodes - spread + rng.IntN(2*spread+1)}
	level, offset := s.Base, 0
	untilSignificant := significantGap(rng, p.SignificantEvery)
	nextFlap := p.NoiseWindow + time.Duration(rng.Float64()*float64(p.FlapEvery))
	flaps := 0
	for at := time.Duration(rng.Float64() * float64(p.ScaleEvery)); at < p.Duration; at += jittered(rng, p.ScaleEvery, p.Jitter) {
		if nextFlap < at {
			flaps++
			s.Events = append(s.Events, churnEvent{At: nextFlap, Kind: flap, Nodes: level + offset, Flap: flaps})
			nextFlap += jittered(rng, p.FlapEvery, p.Jitter)
		}
		e := churnEvent{At: at, Kind: scaleNoise, Available: true}
		if at >= p.NoiseWindow {
			untilSignificant--
		}
		if untilSignificant == 0 {
			e.Kind, level, offset = scaleSignificant, rescaled(level, s.Base, p.SignificantFraction, rng), 0
			untilSignificant = significantGap(rng, p.SignificantEvery)
		} else {
			offset = nudged(offset, rng)
		}
		e.Nodes = level + offset
		s.Events = append(s.Events, e)
	}
	return s
}

// jittered is d × [1-j, 1+j].
func jittered(rng *rand.Rand, d time.Duration, j float64) time.Duration {
	return time.Duration(float64(d) * (1 - j + 2*j*rng.Float64()))
}

// significantGap is how many scale events until the next significant one:
// n-1, n or n+1, at least one.
func significantGap(rng *rand.Rand, n int) int { return max(1, n-1+rng.IntN(3)) }

// nudged moves a node count's offset from its level by one node, staying
// within one of the level: noise that never drifts towards the
// significance rule.
func nudged(offset int, rng *rand.Rand) int {
	switch {
	case offset != 0:
		return 0
	case rng.IntN(2) == 0:
		return -1
	default:
		return 1
	}
}

// rescaled is the level after a scale-out or scale-in by fraction: back to
// base when away from it, else away from it either way.
func rescaled(level, base int, fraction float64, rng *rand.Rand) int {
	if level != base {
		return base
	}
	step := max(1, int(math.Round(float64(base)*fraction)))
	if rng.IntN(2) == 0 {
		return base - step
	}
	return base + step
}

// churnEvents counts events by kind.
type churnEvents struct {
	ScaleNoise       int `json:"scaleNoise"`
	ScaleSignificant int `json:"scaleSignificant"`
	Flaps            int `json:"flaps"`
}

func (c *churnEvents) add(k churnKind) {
	switch k {
	case scaleNoise:
		c.ScaleNoise++
	case scaleSignificant:
		c.ScaleSignificant++
	case flap:
		c.Flaps++
	}
}

func (c churnEvents) plus(o churnEvents) churnEvents {
	return churnEvents{c.ScaleNoise + o.ScaleNoise, c.ScaleSignificant + o.ScaleSignificant, c.Flaps + o.Flaps}
}

func (c churnEvents) total() int { return c.ScaleNoise + c.ScaleSignificant + c.Flaps }

func (c churnEvents) String() string {
	return fmt.Sprintf("%d (%d noise / %d significant / %d flaps)", c.total(), c.ScaleNoise, c.ScaleSignificant, c.Flaps)
}

// short is e.g. "40000: 32000 / 6000 / 2000".
func (c churnEvents) short() string {
	return fmt.Sprintf("%d: %d / %d / %d", c.total(), c.ScaleNoise, c.ScaleSignificant, c.Flaps)
}

// timedEvent is an event of the cluster at index cluster.
type timedEvent struct {
	cluster int
	churnEvent
}

// shardEvents are the events in [from, to) of the clusters one of shards
// senders drives (cluster i is shard i % shards's), in the order they are
// due; one cluster's stay in its schedule's order.
func shardEvents(schedule []clusterSchedule, shard, shards int, from, to time.Duration) []timedEvent {
	var out []timedEvent
	for i := shard; i < len(schedule); i += shards {
		for _, e := range schedule[i].Events {
			if e.At >= from && e.At < to {
				out = append(out, timedEvent{cluster: i, churnEvent: e})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b timedEvent) int { return cmp.Compare(a.At, b.At) })
	return out
}

// countEvents counts the schedule's events in [from, to).
func countEvents(schedule []clusterSchedule, from, to time.Duration) churnEvents {
	var c churnEvents
	for _, s := range schedule {
		for _, e := range s.Events {
			if e.At >= from && e.At < to {
				c.add(e.Kind)
			}
		}
	}
	return c
}

// applyChurn sets a ManagedCluster's status as the event leaves it: its
// node count claim and its Available condition.
func applyChurn(c *clusterv1.ManagedCluster, e churnEvent) {
	setClaim(c, nodesClaim, fmt.Sprint(e.Nodes))
	available := metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
		Reason: availableReason, Message: "Managed cluster is available",
	}
	if !e.Available {
		available.Status = metav1.ConditionFalse
		available.Reason = fmt.Sprintf("BenchFlap%d", e.Flap)
		available.Message = "Set by the ClusterProfile benchmark's churn"
	}
	meta.SetStatusCondition(&c.Status.Conditions, available)
}

// churnStart is the state a cluster's schedule starts from: its base node
// count, up.
func churnStart(s clusterSchedule) churnEvent {
	return churnEvent{Kind: scaleSignificant, Nodes: s.Base, Available: true}
}

func setClaim(c *clusterv1.ManagedCluster, name, value string) {
	for i := range c.Status.ClusterClaims {
		if c.Status.ClusterClaims[i].Name == name {
			c.Status.ClusterClaims[i].Value = value
			return
		}
	}
	c.Status.ClusterClaims = append(c.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
}

// scaledRule is the facts' default write budget on a clock compression
// times faster.
func scaledRule(compression int) damping.Rule {
	r := damping.Default()
	r.MinInterval /= time.Duration(compression)
	r.Refresh /= time.Duration(compression)
	r.Settle = damping.DefaultSettle / time.Duration(compression)
	return r
}

// ruleFlags are the manager's flags that set rule.
func ruleFlags(r damping.Rule) []string {
	if r.MinInterval <= 0 {
		return []string{"--facts-min-interval=0s"}
	}
	return []string{
		"--facts-min-interval=" + r.MinInterval.String(),
		fmt.Sprintf("--facts-significant-change=%g", r.SignificantFraction),
		"--facts-refresh=" + r.Refresh.String(),
		"--facts-settle=" + r.Settle.String(),
	}
}

// writesPerProfileHour is how many writes each profile took per hour of the
// fleet's time, when the writes came over real time at compression.
func writesPerProfileHour(writes, profiles int, real time.Duration, compression int) float64 {
	scaled := real * time.Duration(compression)
	if profiles <= 0 || scaled <= 0 {
		return 0
	}
	return float64(writes) / float64(profiles) / scaled.Hours()
}
