package main

import (
	"fmt"
	"html"
	"strings"
)

// The plot: one panel per figure, side by side, each its figure against
// profiles, drawn by the bench itself so `make bench` needs no plotting
// tool.
const (
	panelWidth  = 300
	panelHeight = 200
	panelMargin = 50
)

// sweepPanel is one figure of the plot.
type sweepPanel struct {
	title string
	value func(sweepPoint) float64
	// floor is a line drawn across the panel (0: none), e.g. a goal.
	floor float64
}

var sweepPanels = []sweepPanel{
	{"cold convergence / floor", func(p sweepPoint) float64 { return p.RatioToFloor }, goalRatioToFloor},
	{"peak RSS (MiB)", func(p sweepPoint) float64 { return p.PeakRSSMiB }, goalPeakRSSMiB},
	{"propagation p99 (ms)", func(p sweepPoint) float64 { return p.P99Millis }, goalPropagationP99},
}

// sweepSVG is the plot of points: each panel's line with its goal dashed.
func sweepSVG(points []sweepPoint) string {
	width := len(sweepPanels)*(panelWidth+panelMargin) + panelMargin
	height := panelHeight + 2*panelMargin
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	for i, panel := range sweepPanels {
		left := panelMargin + i*(panelWidth+panelMargin)
		writePanel(&b, panel, points, left, panelMargin)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// writePanel draws one panel with its top-left corner at (left, top).
func writePanel(b *strings.Builder, panel sweepPanel, points []sweepPoint, left, top int) {
	maxX, maxY := 1.0, panel.floor
	for _, p := range points {
		maxX, maxY = max(maxX, float64(p.Profiles)), max(maxY, panel.value(p))
	}
	maxY = max(maxY*1.1, 1)
	x := func(v float64) float64 { return float64(left) + v/maxX*panelWidth }
	y := func(v float64) float64 { return float64(top+panelHeight) - v/maxY*panelHeight }
	fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", left, top-10, html.EscapeString(panel.title))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, top, panelWidth, panelHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d">0</text><text x="%d" y="%d" text-anchor="end">%.0f profiles</text>`+"\n",
		left, top+panelHeight+15, left+panelWidth, top+panelHeight+15, maxX)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%.4g</text>`+"\n", left-4, top+10, maxY)
	if panel.floor > 0 {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#c33" stroke-dasharray="4 3"/>`+"\n",
			left, y(panel.floor), left+panelWidth, y(panel.floor))
	}
	coords := make([]string, len(points))
	for i, p := range points {
		coords[i] = fmt.Sprintf("%.1f,%.1f", x(float64(p.Profiles)), y(panel.value(p)))
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="#236" stroke-width="2" points="%s"/>`+"\n", strings.Join(coords, " "))
	for _, c := range coords {
		xy := strings.SplitN(c, ",", 2)
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="#236"/>`+"\n", xy[0], xy[1])
	}
}
