package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// sweepPoint is one size of a sweep: what the cost curve plots.
type sweepPoint struct {
	Profiles    int `json:"profiles"`
	TokenCopies int `json:"tokenCopies"`
	// RatioToFloor is the cold convergence over the floor.
	RatioToFloor float64 `json:"ratioToFloor"`
	// PeakRSSMiB is the highest of the cold and the restarted process.
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	P99Millis  float64 `json:"propagationP99Millis"`
}

// parseSweep reads -sweep: profile counts, comma-separated, each at least
// one profile per namespace, in increasing order.
func parseSweep(value string, namespaces int) ([]int, error) {
	if value == "" {
		return nil, nil
	}
	var sizes []int
	for field := range strings.SplitSeq(value, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		switch {
		case err != nil:
			return nil, fmt.Errorf("%q is not a profile count", field)
		case n < namespaces:
			return nil, fmt.Errorf("%d profiles are fewer than the %d namespaces", n, namespaces)
		case len(sizes) > 0 && n <= sizes[len(sizes)-1]:
			return nil, fmt.Errorf("sizes must increase: %d after %d", n, sizes[len(sizes)-1])
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// runSweep runs the whole benchmark once per size, each on a fresh API
// server, and returns a point per size that finished.
func runSweep(ctx context.Context, cfg config, sizes []int, progress io.Writer) ([]sweepPoint, error) {
	var points []sweepPoint
	for _, profiles := range sizes {
		sized := cfg
		sized.clusters = profiles / cfg.namespaces
		fmt.Fprintf(progress, "sweep: %d clusters × %d namespaces\n", sized.clusters, cfg.namespaces)
		res, err := run(ctx, sized)
		if err != nil {
			return points, fmt.Errorf("sweep at %d profiles: %w", profiles, err)
		}
		points = append(points, pointOf(res))
	}
	return points, nil
}

// pointOf is the sweep's view of one run.
func pointOf(r *results) sweepPoint {
	p := sweepPoint{Profiles: r.Profiles, TokenCopies: r.TokenCopies}
	if r.Cold != nil {
		p.RatioToFloor = r.Cold.RatioToFloor
	}
	for _, m := range r.Memory {
		if m.Process == "cold" || m.Process == "restarted" {
			p.PeakRSSMiB = max(p.PeakRSSMiB, m.PeakRSSMiB)
		}
	}
	if r.Propagation != nil {
		p.P99Millis = r.Propagation.P99Millis
	}
	return p
}

// fitLine is the least-squares line through (x, y): y ≈ intercept + slope·x.
func fitLine(x, y []float64) (slope, intercept float64) {
	n := float64(len(x))
	if n < 2 {
		return 0, 0
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy = sx+x[i], sy+y[i]
		sxx, sxy = sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n
	}
	slope = (n*sxy - sx*sy) / den
	return slope, (sy - slope*sx) / n
}

// memoryFit is peak RSS against profiles: KiB per profile (with its token
// copies, which grow with it) and the MiB a manager takes with none.
func memoryFit(points []sweepPoint) (kibPerProfile, baseMiB float64) {
	x := make([]float64, len(points))
	y := make([]float64, len(points))
	for i, p := range points {
		x[i], y[i] = float64(p.Profiles), p.PeakRSSMiB
	}
	slope, intercept := fitLine(x, y)
	return slope * 1024, intercept
}

// printSweep writes the sweep's table and its memory fit.
func printSweep(w io.Writer, points []sweepPoint) {
	fmt.Fprintln(w, "Sweep (each size a whole run on a fresh API server)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  profiles\ttoken copies\tcold convergence / floor\tpeak RSS (MiB)\tpropagation p99 (ms)")
	for _, p := range points {
		fmt.Fprintf(tw, "  %d\t%d\t%.2f×\t%.0f\t%.0f\n", p.Profiles, p.TokenCopies, p.RatioToFloor, p.PeakRSSMiB, p.P99Millis)
	}
	_ = tw.Flush()
	if len(points) >= 2 {
		perProfile, base := memoryFit(points)
		fmt.Fprintf(w, "  peak RSS fit: %.0f MiB + %.1f KiB per profile (with its token copies)\n", base, perProfile)
	}
}

// writeSweepSVG writes the plot of points to path.
func writeSweepSVG(path string, points []sweepPoint) error {
	return os.WriteFile(path, []byte(sweepSVG(points)), 0o644)
}
