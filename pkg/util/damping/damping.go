// Package damping is the write budget for facts that drift: node counts,
// resource sums and any other property a cluster's claims carry. Every
// write of a ClusterProfile's status makes a consumer such as MultiKueue
// rebuild its client for that cluster, so such facts are published at most
// once per Rule.MinInterval per cluster on average (KEP-4322's 30 s by
// default), with one publication of slack: a significant change goes out at
// once after a quiet spell, even right after the previous publication, and
// then as the interval allows; a change below the significance rule waits
// up to Rule.Refresh, or goes along with a write that goes out anyway.
// Conditions, access entries and the version are not facts: their writers
// publish them at once.
//
// The one rule serves both publishers of facts: the cluster-profile-agent,
// damping the ClusterClaims it writes on its cluster, and the mirror,
// damping the properties it copies from every claim of a ManagedCluster.
// The slack is what keeps the two from adding up: a cluster whose first
// report is followed by a joining node has both published within seconds,
// not one interval at the agent and then another at the mirror. The mirror
// also lets a change settle (Rule.Settle) before it publishes it: the
// klusterlet carries an agent's report to the hub one ClusterClaim at a
// time, and a report published in pieces would spend the slack on itself.
package damping

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults of Rule. KEP-4322 asks for at most one status write per 30 s
// per profile and no rapidly changing data: a significant change (a node
// joining an empty cluster, a tenth of its capacity gone) is what a
// scheduler reading the profile needs, so it goes out within that budget;
// the drift of an autoscaling cluster, which moves its node facts every few
// tens of seconds, waits for the refresh.
const (
	DefaultMinInterval         = 30 * time.Second
	DefaultSignificantFraction = 0.1
	DefaultRefresh             = time.Hour
	// DefaultSettle is the mirror's: long enough for the klusterlet to
	// carry every claim of one report, short beside the interval.
	DefaultSettle = 2 * time.Second
)

// Rule says when a cluster's changed facts are published.
type Rule struct {
	// MinInterval is the average time between two publications of one
	// cluster's facts over any stretch (with Slack publications to spare),
	// and so the longest a significant change waits. Zero turns damping off:
	// every change goes out at once.
	MinInterval time.Duration
	// SignificantFraction is how much a numeric fact (a Kubernetes quantity
	// or an integer) must change, as a fraction of its published value, to
	// count as significant. A fact that appears, disappears, crosses zero
	// or is not numeric is significant whenever it changes.
	SignificantFraction float64
	// Refresh is the longest a change below the significance rule waits
	// before it is published anyway, so no published fact is ever older.
	Refresh time.Duration
	// Settle is how long a change waits, from when it is first seen, for
	// the rest of the change it belongs to, so that one report is one
	// publication. Zero publishes what is seen at once.
	Settle time.Duration
}

// Slack is how many publications a cluster may make ahead of its average
// of one per MinInterval: however they fall, a cluster's facts go out at
// most 1+Slack times in one interval, and at most n+Slack times in n.
const Slack = 1

// Budget is what the rule remembers of one cluster's publications. The
// zero Budget is a cluster not published since this process started.
type Budget struct {
	// Last is when the cluster's facts last went out.
	Last time.Time
	// Whole is when the cluster has its whole slack again: each
	// publication moves it one MinInterval on from itself or from then,
	// whichever is later.
	Whole time.Time
	// Pending is when the change held now was first seen (zero: none).
	Pending time.Time
}

// Hold is b once a change seen at now is held back.
func (b Budget) Hold(now time.Time) Budget {
	if b.Pending.IsZero() {
		b.Pending = now
	}
	return b
}

// Carried is b after changed facts went out at now with a write that went
// out anyway: they are published, and the budget is not spent.
func (b Budget) Carried(now time.Time) Budget {
	return Budget{Last: now, Whole: b.Whole}
}

// Spend is b after a publication at now.
func (r Rule) Spend(b Budget, now time.Time) Budget {
	whole := b.Whole
	if whole.Before(now) {
		whole = now
	}
	return Budget{Last: now, Whole: whole.Add(r.MinInterval)}
}

// next is when a publication may go out: once no more than Slack intervals
// are spent ahead of time.
func (r Rule) next(b Budget) time.Time {
	return b.Whole.Add(-Slack * r.MinInterval)
}

// Default is the rule of a bundle installed with its defaults.
func Default() Rule {
	return Rule{MinInterval: DefaultMinInterval, SignificantFraction: DefaultSignificantFraction, Refresh: DefaultRefresh}
}

// Off publishes every change at once.
func Off() Rule { return Rule{} }

// Validate reports a rule that cannot be met.
func (r Rule) Validate() error {
	switch {
	case r.MinInterval < 0:
		return fmt.Errorf("the facts' minimum interval must not be negative, not %s", r.MinInterval)
	case r.SignificantFraction < 0 || math.IsNaN(r.SignificantFraction):
		return fmt.Errorf("the facts' significant change must not be negative, not %v", r.SignificantFraction)
	case r.MinInterval > 0 && r.Refresh < r.MinInterval:
		return fmt.Errorf("the facts' refresh (%s) must not be shorter than their minimum interval (%s)", r.Refresh, r.MinInterval)
	case r.Settle < 0 || (r.MinInterval > 0 && r.Settle > r.MinInterval):
		return fmt.Errorf("the facts' settle time (%s) must be between 0 and their minimum interval (%s)", r.Settle, r.MinInterval)
	}
	return nil
}

// Change is how much a set of facts changed.
type Change int

const (
	// Unchanged: nothing to publish.
	Unchanged Change = iota
	// Insignificant: only numeric facts moved, each by no more than the
	// significant fraction.
	Insignificant
	// Significant: a fact appeared, disappeared, crossed zero, changed its
	// text or moved by more than the significant fraction.
	Significant
)

func (c Change) String() string {
	return [...]string{"Unchanged", "Insignificant", "Significant"}[c]
}

// Compare says how want differs from published, fact by fact (name → value).
func (r Rule) Compare(published, want map[string]string) Change {
	change := Unchanged
	for name, value := range want {
		old, ok := published[name]
		switch {
		case !ok:
			return Significant
		case old == value:
		case r.significant(old, value):
			return Significant
		default:
			change = Insignificant
		}
	}
	for name := range published {
		if _, ok := want[name]; !ok {
			return Significant
		}
	}
	return change
}

// significant tells whether a fact's change from old to value matters.
func (r Rule) significant(old, value string) bool {
	from, okFrom := number(old)
	to, okTo := number(value)
	if !okFrom || !okTo || from == 0 || to == 0 || (from < 0) != (to < 0) {
		return true
	}
	return math.Abs(to-from) > r.SignificantFraction*math.Abs(from)
}

// number reads a fact as a Kubernetes quantity ("12", "250m", "64Gi").
func number(s string) (float64, bool) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, false
	}
	return q.AsApproximateFloat64(), true
}

// Decision is whether a cluster's facts go out now.
type Decision struct {
	// Change is how the facts changed since they were last published.
	Change Change
	// Publish: write the wanted facts now.
	Publish bool
	// Wait is, when a change is held back, how long until it may go out.
	Wait time.Duration
}

// Decide tells whether facts changed from published to want may be
// published at now, given the cluster's budget. A change held back is
// recorded with Budget.Hold, a publication with Spend.
func (r Rule) Decide(published, want map[string]string, b Budget, now time.Time) Decision {
	change := r.Compare(published, want)
	d := Decision{Change: change}
	if change == Unchanged {
		return d
	}
	if r.MinInterval <= 0 {
		d.Publish = true
		return d
	}
	var at time.Time
	if !b.Last.IsZero() {
		at = r.next(b)
		if refreshed := b.Last.Add(r.Refresh); change == Insignificant && refreshed.After(at) {
			at = refreshed
		}
	}
	if settled := b.Hold(now).Pending.Add(r.Settle); settled.After(at) {
		at = settled
	}
	if now.Before(at) {
		d.Wait = at.Sub(now)
		return d
	}
	d.Publish = true
	return d
}

// AddFlags binds the rule to the flags every binary that publishes facts
// takes, with the rule's current values as defaults.
func (r *Rule) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&r.MinInterval, "facts-min-interval", r.MinInterval,
		"Average time between two publications of a cluster's drifting facts (node counts, resource sums, claim properties), with one publication to spare, and so the longest a significant change of them waits; 0 publishes every change at once. Conditions, access entries and the version are never held.")
	fs.Float64Var(&r.SignificantFraction, "facts-significant-change", r.SignificantFraction,
		"Fraction of its published value by which a numeric fact must change to be published within the minimum interval; smaller changes wait for the refresh.")
	fs.DurationVar(&r.Refresh, "facts-refresh", r.Refresh,
		"Longest a change below the significant change waits before it is published anyway.")
}

// AddSettleFlag binds Settle, which only the mirror takes: the agent
// decides on a whole report at once.
func (r *Rule) AddSettleFlag(fs *pflag.FlagSet) {
	fs.DurationVar(&r.Settle, "facts-settle", r.Settle,
		"How long a changed fact waits, from when it is first seen, for the rest of its cluster's report (the klusterlet carries claims one at a time), so that one report is one publication; 0 publishes what is seen at once.")
}
