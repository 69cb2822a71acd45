package damping

import (
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
	cases := map[string]struct {
		rule          Rule
		want          map[string]string
		lastPublished time.Time
		out           Decision
	}{
		"unchanged": {rule: Default(), want: published, lastPublished: now.Add(-time.Second),
			out: Decision{Change: Unchanged}},
		"significant, interval passed": {rule: Default(), want: jump, lastPublished: now.Add(-31 * time.Second),
			out: Decision{Change: Significant, Publish: true}},
		"significant within the interval waits for KEP-4322's 30 s at most": {rule: Default(), want: jump, lastPublished: now.Add(-10 * time.Second),
			out: Decision{Change: Significant, Wait: 20 * time.Second}},
		"insignificant after the interval waits for the refresh": {rule: Default(), want: noise, lastPublished: now.Add(-10 * time.Minute),
			out: Decision{Change: Insignificant, Wait: 50 * time.Minute}},
		"insignificant after the refresh": {rule: Default(), want: noise, lastPublished: now.Add(-time.Hour),
			out: Decision{Change: Insignificant, Publish: true}},
		"never published": {rule: Default(), want: noise,
			out: Decision{Change: Insignificant, Publish: true}},
		"damping off: every change is significant and goes out": {rule: Off(), want: noise, lastPublished: now.Add(-time.Second),
			out: Decision{Change: Significant, Publish: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.rule.Decide(published, tc.want, tc.lastPublished, now)
			if diff := cmp.Diff(tc.out, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAJoiningNodeIsPublishedWithinKEP4322sBudget: a cluster's first node
// (its node count crossing zero) goes out at most 30 s after the last
// publication, however recent, with the default rule.
func TestAJoiningNodeIsPublishedWithinKEP4322sBudget(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	empty, joined := map[string]string{"nodes": "0"}, map[string]string{"nodes": "1"}
	for _, since := range []time.Duration{0, time.Second, 29 * time.Second, 30 * time.Second, 46 * time.Second, time.Hour} {
		d := Default().Decide(empty, joined, now.Add(-since), now)
		if d.Change != Significant || (!d.Publish && d.Wait > 30*time.Second-since) || (d.Publish && since < 30*time.Second) {
			t.Errorf("%s after the last publication: %+v, want it published within 30 s of that publication", since, d)
		}
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.rule.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
