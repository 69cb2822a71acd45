package main

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSweep(t *testing.T) {
	cases := map[string]struct {
		value string
		want  []int
		err   string
	}{
		"none":               {value: ""},
		"the issue's sizes":  {value: "1000, 5000,10000,35000,70000", want: []int{1000, 5000, 10000, 35000, 70000}},
		"not a number":       {value: "1000,lots", err: `"lots" is not a profile count`},
		"fewer than the set": {value: "5", err: "5 profiles are fewer than the 10 namespaces"},
		"not increasing":     {value: "5000,1000", err: "sizes must increase: 1000 after 5000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseSweep(tc.value, 10)
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Fatalf("parseSweep(%q) error = %v, want %q", tc.value, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseSweep(%q) (-want +got):\n%s", tc.value, diff)
			}
		})
	}
}

func TestPointOfTakesTheHigherPeakAndTheRunsFigures(t *testing.T) {
	r := &results{Profiles: 10000, TokenCopies: 10000,
		Cold:        &coldResult{RatioToFloor: 1.27},
		Propagation: &propagationResult{P99Millis: 131},
		Memory: []processMemory{{Process: "cold", PeakRSSMiB: 150}, {Process: "restarted", PeakRSSMiB: 154},
			{Process: "churn-damped", PeakRSSMiB: 400}},
	}
	want := sweepPoint{Profiles: 10000, TokenCopies: 10000, RatioToFloor: 1.27, PeakRSSMiB: 154, P99Millis: 131}
	if diff := cmp.Diff(want, pointOf(r)); diff != "" {
		t.Errorf("pointOf (-want +got):\n%s", diff)
	}
}

// TestMemoryFitIsExactOnALine: a manager of 40 MiB plus 5 KiB per profile
// is fitted back to those figures.
func TestMemoryFitIsExactOnALine(t *testing.T) {
	var points []sweepPoint
	for _, n := range []int{1000, 5000, 10000} {
		points = append(points, sweepPoint{Profiles: n, PeakRSSMiB: 40 + float64(n)*5/1024})
	}
	perProfile, base := memoryFit(points)
	if diff := cmp.Diff([]float64{5, 40}, []float64{perProfile, base}, cmp.Comparer(func(a, b float64) bool {
		return a-b < 1e-9 && b-a < 1e-9
	})); diff != "" {
		t.Errorf("memoryFit (-want +got):\n%s", diff)
	}
}

func TestPrintSweep(t *testing.T) {
	var b strings.Builder
	printSweep(&b, []sweepPoint{
		{Profiles: 1000, TokenCopies: 1000, RatioToFloor: 1.2, PeakRSSMiB: 45, P99Millis: 20},
		{Profiles: 2000, TokenCopies: 2000, RatioToFloor: 1.25, PeakRSSMiB: 50, P99Millis: 30},
	})
	want := `Sweep (each size a whole run on a fresh API server)
  profiles  token copies  cold convergence / floor  peak RSS (MiB)  propagation p99 (ms)
  1000      1000          1.20×                     45              20
  2000      2000          1.25×                     50              30
  peak RSS fit: 40 MiB + 5.1 KiB per profile (with its token copies)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("printSweep (-want +got):\n%s", diff)
	}
}

// TestSweepSVGDrawsEveryPanel: the plot is well-formed SVG with a line, a
// dot per size and a dashed goal in each of its three panels.
func TestSweepSVGDrawsEveryPanel(t *testing.T) {
	points := []sweepPoint{
		{Profiles: 1000, RatioToFloor: 1.2, PeakRSSMiB: 45, P99Millis: 20},
		{Profiles: 5000, RatioToFloor: 1.3, PeakRSSMiB: 90, P99Millis: 60},
		{Profiles: 10000, RatioToFloor: 1.4, PeakRSSMiB: 150, P99Millis: 130},
	}
	counts := map[string]int{}
	d := xml.NewDecoder(strings.NewReader(sweepSVG(points)))
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the plot is not well-formed XML: %v", err)
			}
			break
		}
		if start, ok := tok.(xml.StartElement); ok {
			counts[start.Name.Local]++
		}
	}
	want := map[string]int{"svg": 1, "rect": 3, "polyline": 3, "circle": 9, "line": 3, "text": 12}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("elements of the plot (-want +got):\n%s", diff)
	}
}
