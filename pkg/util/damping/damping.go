// Package damping is the write budget for facts that drift: node counts,
// resource sums and any other property a cluster's claims carry. Every
// write of a ClusterProfile's status makes a consumer such as MultiKueue
// rebuild its client for that cluster, so such facts are published at most
// once per Rule.MinInterval per cluster (KEP-4322's 30 s by default): a
// significant change as soon as the interval allows, a change below the
// significance rule up to Rule.Refresh later or along with a write that goes
// out anyway. Conditions, access entries and the version are not facts: their
// writers publish them at once.
//
// The one rule serves both publishers of facts: the cluster-profile-agent,
// damping the ClusterClaims it writes on its cluster, and the mirror,
// damping the properties it copies from every claim of a ManagedCluster.
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
)

// Rule says when a cluster's changed facts are published.
type Rule struct {
	// MinInterval is the least time between two publications of one
	// cluster's facts, and so the longest a significant change waits. Zero
	// turns damping off: every change goes out at once.
	MinInterval time.Duration
	// SignificantFraction is how much a numeric fact (a Kubernetes quantity
	// or an integer) must change, as a fraction of its published value, to
	// count as significant. A fact that appears, disappears, crosses zero
	// or is not numeric is significant whenever it changes.
	SignificantFraction float64
	// Refresh is the longest a change below the significance rule waits
	// before it is published anyway, so no published fact is ever older.
	Refresh time.Duration
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
// published at now, given when the cluster's facts were last published
// (zero: never, or not since this process started).
func (r Rule) Decide(published, want map[string]string, lastPublished, now time.Time) Decision {
	change := r.Compare(published, want)
	d := Decision{Change: change}
	if change == Unchanged {
		return d
	}
	if r.MinInterval <= 0 || lastPublished.IsZero() {
		d.Publish = true
		return d
	}
	wait := r.MinInterval
	if change == Insignificant {
		wait = r.Refresh
	}
	if since := now.Sub(lastPublished); since < wait {
		d.Wait = wait - since
		return d
	}
	d.Publish = true
	return d
}

// AddFlags binds the rule to the flags every binary that publishes facts
// takes, with the rule's current values as defaults.
func (r *Rule) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&r.MinInterval, "facts-min-interval", r.MinInterval,
		"Least time between two publications of a cluster's drifting facts (node counts, resource sums, claim properties), and so the longest a significant change of them waits; 0 publishes every change at once. Conditions, access entries and the version are never held.")
	fs.Float64Var(&r.SignificantFraction, "facts-significant-change", r.SignificantFraction,
		"Fraction of its published value by which a numeric fact must change to be published within the minimum interval; smaller changes wait for the refresh.")
	fs.DurationVar(&r.Refresh, "facts-refresh", r.Refresh,
		"Longest a change below the significant change waits before it is published anyway.")
}
