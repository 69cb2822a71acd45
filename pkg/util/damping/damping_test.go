package damping

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	published := map[string]string{"nodes": "10", "cpu": "40", "memory": "160Gi", "region": "eu-west-1"}
	with := func(name, value string) map[string]string {
		out := map[string]string{}
		for k, v := range published {
			out[k] = v
		}
		if value == "" {
			delete(out, name)
		} else {
			out[name] = value
		}
		return out
	}
	cases := map[string]struct {
		want map[string]string
		out  Change
	}{
		"same":                           {want: with("nodes", "10"), out: Unchanged},
		"count within the fraction":      {want: with("nodes", "11"), out: Insignificant},
		"count past the fraction":        {want: with("nodes", "12"), out: Significant},
		"count down within the fraction": {want: with("nodes", "9"), out: Insignificant},
		"quantity in other units":        {want: with("cpu", "41500m"), out: Insignificant},
		"memory past the fraction":       {want: with("memory", "200Gi"), out: Significant},
		"same quantity, other spelling":  {want: with("memory", "163840Mi"), out: Insignificant},
		"to zero":                        {want: with("nodes", "0"), out: Significant},
		"text changed":                   {want: with("region", "eu-west-2"), out: Significant},
		"number became text":             {want: with("nodes", "many"), out: Significant},
		"fact appears":                   {want: with("gpu", "8"), out: Significant},
		"fact disappears":                {want: with("cpu", ""), out: Significant},
	}
	rule := Default()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.out, rule.Compare(published, tc.want)); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareFromZero(t *testing.T) {
	if got := Default().Compare(map[string]string{"gpu": "0"}, map[string]string{"gpu": "1"}); got != Significant {
		t.Errorf("0 → 1 is %s, want Significant", got)
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	published := map[string]string{"nodes": "10"}
	noise := map[string]string{"nodes": "11"}
	jump := map[string]string{"nodes": "20"}
	// spent is the budget of a cluster published at each of ago.
	spent := func(ago ...time.Duration) Budget {
		var b Budget
		for _, d := range ago {
			b = Default().Spend(b, now.Add(-d))
		}
		return b
	}
	settling := Default()
	settling.Settle = DefaultSettle
	cases := map[string]struct {
		rule   Rule
		want   map[string]string
		budget Budget
		out    Decision
	}{
		"unchanged": {rule: Default(), want: published, budget: spent(time.Second),
			out: Decision{Change: Unchanged}},
		"significant, interval passed": {rule: Default(), want: jump, budget: spent(31 * time.Second),
			out: Decision{Change: Significant, Publish: true}},
		"significant right after a publication that followed a quiet spell uses the slack": {rule: Default(), want: jump, budget: spent(time.Second),
			out: Decision{Change: Significant, Publish: true}},
		"significant after the slack is spent waits for KEP-4322's 30 s at most": {rule: Default(), want: jump, budget: spent(11*time.Second, 10*time.Second),
			out: Decision{Change: Significant, Wait: 19 * time.Second}},
		"insignificant after the interval waits for the refresh": {rule: Default(), want: noise, budget: spent(10 * time.Minute),
			out: Decision{Change: Insignificant, Wait: 50 * time.Minute}},
		"insignificant after the refresh": {rule: Default(), want: noise, budget: spent(time.Hour),
			out: Decision{Change: Insignificant, Publish: true}},
		"never published": {rule: Default(), want: noise,
			out: Decision{Change: Insignificant, Publish: true}},
		"a change first seen waits to settle": {rule: settling, want: jump,
			out: Decision{Change: Significant, Wait: 2 * time.Second}},
		"a change seen a second ago waits for the rest of its settle time": {rule: settling, want: jump, budget: Budget{}.Hold(now.Add(-time.Second)),
			out: Decision{Change: Significant, Wait: time.Second}},
		"a settled change goes out": {rule: settling, want: jump, budget: Budget{}.Hold(now.Add(-2 * time.Second)),
			out: Decision{Change: Significant, Publish: true}},
		"settling adds nothing to a wait for the interval": {rule: settling, want: jump, budget: spent(11*time.Second, 10*time.Second).Hold(now),
			out: Decision{Change: Significant, Wait: 19 * time.Second}},
		"noise right after facts carried by another write waits for the refresh": {rule: Default(), want: noise, budget: spent(time.Hour).Carried(now.Add(-time.Second)),
			out: Decision{Change: Insignificant, Wait: time.Hour - time.Second}},
		"carried facts spend none of the budget": {rule: Default(), want: jump, budget: spent(11 * time.Second).Carried(now.Add(-10 * time.Second)),
			out: Decision{Change: Significant, Publish: true}},
		"damping off: every change is significant and goes out": {rule: Off(), want: noise, budget: spent(time.Second),
			out: Decision{Change: Significant, Publish: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.rule.Decide(published, tc.want, tc.budget, now)
			if diff := cmp.Diff(tc.out, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAJoiningNodeIsPublishedAtOnce: a cluster's first node (its node
// count crossing zero) goes out at once after the cluster's first report,
// however soon after it, and within 30 s of any earlier publication.
func TestAJoiningNodeIsPublishedAtOnce(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	empty, joined := map[string]string{"nodes": "0"}, map[string]string{"nodes": "1"}
	for _, since := range []time.Duration{0, time.Second, 29 * time.Second, 30 * time.Second, 46 * time.Second, time.Hour} {
		first := Default().Spend(Budget{}, now.Add(-since))
		if d := Default().Decide(empty, joined, first, now); !d.Publish {
			t.Errorf("%s after the first report: %+v, want it published at once", since, d)
		}
		busy := Default().Spend(first, now.Add(-since))
		d := Default().Decide(empty, joined, busy, now)
		if d.Change != Significant || (!d.Publish && d.Wait > 30*time.Second) {
			t.Errorf("%s after two publications: %+v, want it published within 30 s", since, d)
		}
	}
}

// TestPublicationsKeepKEP4322sAverage drives a flapping cluster (a
// significant change every second for ten minutes) through the rule, as
// both publishers do, and counts what goes out: never more than 1+Slack in
// any 30 s, and no more than one per 30 s (plus the slack) over the whole.
func TestPublicationsKeepKEP4322sAverage(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	rule := Default()
	var budget Budget
	var out []time.Time
	published := map[string]string{"nodes": "0"}
	for i := range 600 {
		now := start.Add(time.Duration(i) * time.Second)
		want := map[string]string{"nodes": fmt.Sprint(i % 2)}
		if d := rule.Decide(published, want, budget, now); d.Publish {
			budget, published = rule.Spend(budget, now), want
			out = append(out, now)
		}
	}
	for i := range out {
		in := 0
		for _, at := range out[i:] {
			if at.Sub(out[i]) < rule.MinInterval {
				in++
			}
		}
		if in > 1+Slack {
			t.Errorf("%d publications in the 30 s from %s, want at most %d", in, out[i].Sub(start), 1+Slack)
		}
	}
	if limit := 600/30 + Slack; len(out) > limit {
		t.Errorf("%d publications in 10 minutes of flapping, want at most %d", len(out), limit)
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		rule Rule
		ok   bool
	}{
		"default":                     {rule: Default(), ok: true},
		"off":                         {rule: Off(), ok: true},
		"negative interval":           {rule: Rule{MinInterval: -time.Second}},
		"negative fraction":           {rule: Rule{MinInterval: time.Minute, SignificantFraction: -0.1, Refresh: time.Hour}},
		"refresh before the interval": {rule: Rule{MinInterval: time.Hour, Refresh: time.Minute}},
		"settling":                    {rule: Rule{MinInterval: time.Minute, Refresh: time.Hour, Settle: DefaultSettle}, ok: true},
		"off with the default settle": {rule: Rule{Settle: DefaultSettle}, ok: true},
		"settling past the interval":  {rule: Rule{MinInterval: time.Second, Refresh: time.Hour, Settle: DefaultSettle}},
		"negative settle":             {rule: Rule{MinInterval: time.Minute, Refresh: time.Hour, Settle: -time.Second}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.rule.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
