package docs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnchor: GitHub's anchor rules, on the kinds of heading the docs use.
func TestAnchor(t *testing.T) {
	cases := map[string]struct {
		heading string
		want    string
	}{
		"alert name":             {heading: "ClusterProfileWritesFailing", want: "clusterprofilewritesfailing"},
		"words":                  {heading: "State and backups", want: "state-and-backups"},
		"code spans":             {heading: "`kubectl clusterprofile doctor` and `get`", want: "kubectl-clusterprofile-doctor-and-get"},
		"punctuation dropped":    {heading: "Real OCM on this machine (`test/ocmlocal`)", want: "real-ocm-on-this-machine-testocmlocal"},
		"apostrophe and colon":   {heading: "2,000 profiles: the mirror beside OCM's", want: "2000-profiles-the-mirror-beside-ocms"},
		"hyphen and underscore":  {heading: "cp-creds and go_test", want: "cp-creds-and-go_test"},
		"a link by its text":     {heading: "See [the chart](../charts/README.md)", want: "see-the-chart"},
		"emphasis dropped":       {heading: "**Bold** and *em*", want: "bold-and-em"},
		"spaces are not merged":  {heading: "a - b", want: "a---b"},
		"non-ASCII letters kept": {heading: "Übersicht", want: "übersicht"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := anchor(tc.heading); got != tc.want {
				t.Errorf("anchor(%q) = %q, want %q", tc.heading, got, tc.want)
			}
		})
	}
}

// TestAnchorsNumberRepeats: a repeated heading gets -1, -2, ...; headings
// in code blocks are none.
func TestAnchorsNumberRepeats(t *testing.T) {
	doc := "# Title\n## Setup\ntext\n## Setup\n```sh\n# a comment, no heading\n```\n### Setup\n"
	want := map[string]bool{"title": true, "setup": true, "setup-1": true, "setup-2": true}
	if diff := cmp.Diff(want, anchors(doc)); diff != "" {
		t.Errorf("anchors (-want +got):\n%s", diff)
	}
}

// TestLinks: links in prose, across a line break, and images count; links
// in code blocks and code spans do not.
func TestLinks(t *testing.T) {
	doc := "See [install](docs/install.md#uninstall) and [the\nsecurity doc](docs/security.md).\n" +
		"![picture](docs/flow.png) `[not a link](nowhere.md)`\n" +
		"```\n[not a link](nowhere.md)\n```\n[web](https://example.com) [here](#title)\n"
	want := []string{"docs/install.md#uninstall", "docs/security.md", "docs/flow.png", "https://example.com", "#title"}
	if diff := cmp.Diff(want, links(doc)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

// TestBrokenLink: what counts as a broken link, on a small tree.
func TestBrokenLink(t *testing.T) {
	root := t.TempDir()
	for path, content := range map[string]string{
		"README.md":      "# Title\n## Install\n",
		"docs/ops.md":    "# Operations\n### ClusterProfileManagerDown\n",
		"docs/flow.txt":  "",
		"charts/c/x.yml": "",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	anchorsOf := func(file string) (map[string]bool, error) {
		data, err := os.ReadFile(filepath.Join(root, file))
		return anchors(string(data)), err
	}
	cases := map[string]struct {
		from, target string
		broken       bool
	}{
		"file":                   {from: "README.md", target: "docs/ops.md"},
		"file and anchor":        {from: "README.md", target: "docs/ops.md#clusterprofilemanagerdown"},
		"same file anchor":       {from: "README.md", target: "#install"},
		"up a directory":         {from: "docs/ops.md", target: "../README.md#title"},
		"a directory":            {from: "README.md", target: "charts/c"},
		"anchor into non-md":     {from: "README.md", target: "docs/flow.txt#L3"},
		"absolute URL":           {from: "README.md", target: "https://example.com/missing.md#nowhere"},
		"missing file":           {from: "README.md", target: "docs/missing.md", broken: true},
		"missing anchor":         {from: "README.md", target: "docs/ops.md#clusterprofilewritesfailing", broken: true},
		"missing same-file one":  {from: "docs/ops.md", target: "#install", broken: true},
		"outside the repository": {from: "README.md", target: "../elsewhere.md", broken: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			problem := brokenLink(root, tc.from, tc.target, anchorsOf)
			if (problem != "") != tc.broken {
				t.Errorf("brokenLink(%q, %q) = %q, want broken %v", tc.from, tc.target, problem, tc.broken)
			}
		})
	}
}
