package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// PrintJSON writes a report or summaries as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// PrintTable writes one line per cluster (what passed) and one more per
// failed check (what to fix).
func PrintTable(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tRESULT\tPROVIDER\tDETAILS")
	for _, row := range r.Rows {
		result := "PASS"
		if !row.OK() {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", orNone(row.Cluster), result, orNone(row.Provider), passed(row))
		for _, c := range row.Checks {
			if !c.OK {
				fmt.Fprintf(tw, "\t\t\t%s: %s\n", c.Name, c.Fix)
			}
		}
		for _, note := range row.Notes {
			fmt.Fprintf(tw, "\t\t\tnote: %s\n", note)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Mirror != "" {
		if _, err := fmt.Fprintf(w, "MIRROR: %s\n", r.Mirror); err != nil {
			return err
		}
	}
	for _, warning := range r.Warnings {
		if _, err := fmt.Fprintf(w, "WARNING: %s\n", warning); err != nil {
			return err
		}
	}
	return nil
}

func passed(row Row) string {
	var names []string
	for _, c := range row.Checks {
		if c.OK {
			names = append(names, c.Name)
		}
	}
	out := "passed: " + orNone(strings.Join(names, ", "))
	if row.ServerVersion != "" {
		out += fmt.Sprintf(" (%s in %s)", row.ServerVersion, row.Latency.Round(time.Millisecond))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
