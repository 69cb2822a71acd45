// Package docs_test keeps the documentation navigable: every relative link
// in the repository's Markdown files resolves to a file and, for a link into
// Markdown, to a heading anchor as GitHub makes them; every alert of the
// chart's PrometheusRule has its runbook section in docs/operations.md; and
// the README stays a page. It needs no control plane.
package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// readmeMaxLines is how long the README may grow: a front door, with
// everything else in docs/.
const readmeMaxLines = 250

var (
	headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	fenceLine   = regexp.MustCompile("^ {0,3}(```|~~~)")
	inlineCode  = regexp.MustCompile("`+[^`]*`+")
	// A link or image: [text](target "title"); the text may span lines.
	link       = regexp.MustCompile(`!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	linkInText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// repoRoot is the directory holding go.mod, above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// readRepoFile is the text of the file at path, relative to root.
func readRepoFile(t *testing.T, root, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// markdownFiles lists the repository's Markdown files, relative to root,
// leaving out bin/ and hidden directories.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// prose is the Markdown outside fenced code blocks, with inline code spans
// removed, so that neither counts as a heading or a link.
func prose(markdown string) []string {
	var lines []string
	fenced := false
	for _, line := range strings.Split(markdown, "\n") {
		if fenceLine.MatchString(line) {
			fenced = !fenced
			lines = append(lines, "")
			continue
		}
		if fenced {
			lines = append(lines, "")
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

// anchor is the id GitHub gives a heading: its text as rendered (links by
// their text, code without backticks, no emphasis), in lower case, every
// character but letters, digits, '_', '-' and spaces dropped, spaces
// turned into '-'.
func anchor(heading string) string {
	heading = linkInText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown document; a repeated one
// gets "-1", "-2", ... as on GitHub.
func anchors(markdown string) map[string]bool {
	got := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(markdown) {
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchor(m[2])
		if n := seen[a]; n > 0 {
			got[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			got[a] = true
		}
		seen[a]++
	}
	return got
}

// headings are the texts of the headings of one level.
func headings(markdown string, level int) []string {
	var got []string
	for _, line := range prose(markdown) {
		if m := headingLine.FindStringSubmatch(line); m != nil && len(m[1]) == level {
			got = append(got, m[2])
		}
	}
	return got
}

// links are the targets of the links of a Markdown document.
func links(markdown string) []string {
	text := strings.Join(prose(markdown), "\n")
	text = inlineCode.ReplaceAllStringFunc(text, func(code string) string {
		if strings.Contains(code, "\n") {
			return code // not a code span: backticks that do not pair on a line
		}
		return ""
	})
	var got []string
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		got = append(got, m[2])
	}
	return got
}

// brokenLink says what is wrong with target, linked from the file from
// (both relative to root), or "" when it resolves.
func brokenLink(root, from, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	path, fragment, _ := strings.Cut(target, "#")
	file := from
	if path != "" {
		file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(from), path)))
		if file == ".." || strings.HasPrefix(file, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			return fmt.Sprintf("%s does not exist", file)
		}
	}
	if fragment == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	ids, err := anchorsOf(file)
	if err != nil {
		return err.Error()
	}
	if !ids[fragment] {
		return fmt.Sprintf("%s has no heading with anchor #%s", file, fragment)
	}
	return ""
}

// TestRelativeLinksResolve: every relative link in every Markdown file
// names a file that exists and, into Markdown, a heading that exists.
func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	for _, want := range []string{"README.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs/operations.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing", want)
		}
	}
	cache := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if ids, ok := cache[file]; ok {
			return ids, nil
		}
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		cache[file] = anchors(string(data))
		return cache[file], nil
	}
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(data)) {
			checked++
			if problem := brokenLink(root, file, target, anchorsOf); problem != "" {
				t.Errorf("%s: link %q: %s", file, target, problem)
			}
		}
	}
	if checked == 0 {
		t.Error("no links found: the link pattern is broken")
	}
}

// TestEveryAlertHasItsRunbook: each alert of the chart's PrometheusRule
// links <runbookBaseURL>#<its name in lower case>, the base is
// docs/operations.md, and that document has a section headed by the
// alert's name; and every runbook section there belongs to an alert.
func TestEveryAlertHasItsRunbook(t *testing.T) {
	root := repoRoot(t)
	read := func(path string) string { return readRepoFile(t, root, path) }
	rules := read("charts/clusterprofile-manager/templates/prometheusrule.yaml")
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\S+)\s*$`).FindAllStringSubmatch(rules, -1)
	urls := regexp.MustCompile(`(?m)^\s*runbook_url: \{\{ \$r\.runbookBaseURL \}\}#(\S+)\s*$`).FindAllStringSubmatch(rules, -1)
	if len(alerts) == 0 || len(alerts) != len(urls) {
		t.Fatalf("%d alerts and %d runbook_urls of the form {{ $r.runbookBaseURL }}#<anchor> in the PrometheusRule template", len(alerts), len(urls))
	}

	values := read("charts/clusterprofile-manager/values.yaml")
	base := regexp.MustCompile(`(?m)^\s*runbookBaseURL: (\S+)\s*$`).FindStringSubmatch(values)
	if base == nil || !strings.HasSuffix(base[1], "/docs/operations.md") {
		t.Errorf("the chart's runbookBaseURL %v does not point at docs/operations.md", base)
	}

	operations := read("docs/operations.md")
	ids := anchors(operations)
	var names []string
	for i, a := range alerts {
		name, fragment := a[1], urls[i][1]
		names = append(names, name)
		if fragment != strings.ToLower(name) {
			t.Errorf("%s links runbook #%s, want #%s", name, fragment, strings.ToLower(name))
		}
		if !ids[fragment] {
			t.Errorf("%s: docs/operations.md has no runbook section %q (anchor #%s)", name, name, fragment)
		}
	}
	var sections []string
	for _, h := range headings(operations, 3) {
		if strings.HasPrefix(h, "ClusterProfile") {
			sections = append(sections, h)
		}
	}
	sort.Strings(names)
	sort.Strings(sections)
	if diff := cmp.Diff(names, sections); diff != "" {
		t.Errorf("alerts against runbook sections of docs/operations.md (-alerts +sections):\n%s", diff)
	}
}

// TestTheREADMEIsAPage: the README stays a front door.
func TestTheREADMEIsAPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail into docs/", n, readmeMaxLines)
	}
}
