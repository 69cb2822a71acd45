package docs_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maxTableCell is how long a table cell may be: a table is for scanning,
// and a longer explanation belongs in the text below it.
const maxTableCell = 300

var (
	tableRow       = regexp.MustCompile(`^ {0,3}\|`)
	tableSeparator = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
)

// TestNoTableCellIsLong: no table cell of the README, CONTRIBUTING, the
// chart's README or docs/ is over maxTableCell characters.
func TestNoTableCellIsLong(t *testing.T) {
	root := repoRoot(t)
	files := []string{"README.md", "CONTRIBUTING.md", "charts/clusterprofile-manager/README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, path := range docs {
		rel, _ := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
	}
	for _, file := range files {
		for _, long := range longTableCells(readRepoFile(t, root, file), maxTableCell) {
			t.Errorf("%s:%s: move the detail below the table, split the row or tighten it", file, long)
		}
	}
}

// TestLongTableCellsFindsThem: the check flags a long cell wherever it is
// in its row, measures cells as GitHub splits them, and leaves alone rows in
// code blocks, separator rows and cells of exactly the limit.
func TestLongTableCellsFindsThem(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	doc := "# Title\n\n" +
		"| a | b |\n" + // line 3
		"|---|---|\n" +
		"| short | " + x(101) + " |\n" + // line 5: flagged
		"| a \\| " + x(97) + " | c |\n" + // line 6: an escaped pipe does not split: flagged
		"| `a | " + x(99) + "` |\n" + // line 7: a pipe in code splits, as on GitHub
		"| " + x(100) + " | at the limit |\n" + // line 8
		"```\n| " + x(200) + " | in a code block |\n```\n" + // lines 9-11
		"|:" + strings.Repeat("-", 200) + ":|---|\n" + // line 12: a separator row
		"|" + x(101) + "|last|\n" // line 13: flagged, no spaces around the pipes
	want := []string{
		fmt.Sprintf("5: a cell of 101 characters: %q", x(80)+"…"),
		fmt.Sprintf("6: a cell of 102 characters: %q", `a \| `+x(75)+"…"),
		fmt.Sprintf("13: a cell of 101 characters: %q", x(80)+"…"),
	}
	if diff := cmp.Diff(want, longTableCells(doc, 100)); diff != "" {
		t.Errorf("longTableCells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"`x", "y` and x", `z \| y`, "", "w"}, tableCells("| `x | y` and x | z \\| y || w |")); diff != "" {
		t.Errorf("tableCells (-want +got):\n%s", diff)
	}
}

// longTableCells lists the table cells of markdown over limit characters, as
// "line: a cell of n characters: its start", outside fenced code blocks.
func longTableCells(markdown string, limit int) []string {
	var out []string
	for i, line := range prose(markdown) {
		if !tableRow.MatchString(line) || tableSeparator.MatchString(line) {
			continue
		}
		for _, cell := range tableCells(line) {
			if n := len([]rune(cell)); n > limit {
				out = append(out, fmt.Sprintf("%d: a cell of %d characters: %q", i+1, n, cellStart(cell)))
			}
		}
	}
	return out
}

// tableCells splits a table row into its cells, trimmed, as GitHub does: on
// every '|' not escaped as \|. GitHub splits a row before it reads code
// spans, so a '|' in backticks splits the cell too (the GFM spec's tables
// extension): a pipe in a cell's code is written \| there as well.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++ // the next character is escaped
		case '|':
			cells = append(cells, strings.TrimSpace(row[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(row[start:]))
}

// cellStart is the first 80 characters of a cell, for a message.
func cellStart(cell string) string {
	if r := []rune(cell); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return cell
}
