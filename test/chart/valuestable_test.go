package chart_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	valuesTableRow = regexp.MustCompile("(?m)^\\| (`[^|]+) \\|(.*)\\|$")
	backticked     = regexp.MustCompile("`([^`]+)`")
)

// TestEveryValueIsInTheREADMEsTable: each value in values.yaml is described
// in the chart README's Values table: named in a row's key column, under a
// row that names one of its parents, or, for the siblings of a row's key
// (the row's key ends in .* or lists them), named in that row's text.
func TestEveryValueIsInTheREADMEsTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "charts", chartName, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "charts", chartName, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	section = section[strings.Index(section, "\n## Values"):]
	section = section[:strings.Index(section[1:], "\n## ")+1]

	// A row describes its keys and everything under them; a key `a.*`
	// describes a's children that the row names, and a key `a.b` the
	// siblings of b the row names (in code).
	type row struct {
		keys, groups []string
		text         string
	}
	var rows []row
	for _, m := range valuesTableRow.FindAllStringSubmatch(section, -1) {
		r := row{text: m[2]}
		previous := ""
		for _, k := range backticked.FindAllStringSubmatch(m[1], -1) {
			key := k[1]
			if strings.HasPrefix(key, ".") && previous != "" { // `a.b.c`, `.d` is a.b.d
				key = previous[:strings.LastIndex(previous, ".")] + key
			}
			previous = key
			if group, ok := strings.CutSuffix(key, ".*"); ok {
				r.groups = append(r.groups, group)
				continue
			}
			r.keys = append(r.keys, key)
			r.groups = append(r.groups, parentOf(key))
		}
		rows = append(rows, r)
	}
	describes := func(r row, path string) bool {
		if slices.Contains(r.keys, path) {
			return true
		}
		name := path[strings.LastIndex(path, ".")+1:]
		return slices.Contains(r.groups, parentOf(path)) && regexp.MustCompile("`(?:[\\w.]*\\.)?"+regexp.QuoteMeta(name)+"`").MatchString(r.text)
	}
	described := func(path string) bool {
		for p := path; p != ""; p = parentOf(p) {
			for _, r := range rows {
				if describes(r, p) {
					return true
				}
			}
		}
		return false
	}
	var missing []string
	for _, path := range leafPaths("", values) {
		if !described(path) {
			missing = append(missing, path)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("values.yaml has values the chart README's Values table does not describe:\n  %s", strings.Join(missing, "\n  "))
	}
}

// leafPaths lists the dotted paths of a values tree's leaves: scalars,
// lists and empty maps.
func leafPaths(prefix string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []string{prefix}
	}
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, leafPaths(p, m[k])...)
	}
	return out
}

func parentOf(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[:i]
	}
	return ""
}
