package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	chartImageRepository = regexp.MustCompile(`(?m)^image:\n  repository: (\S+)$`)
	makeVariable         = func(name string) *regexp.Regexp { return regexp.MustCompile(`(?m)^` + name + ` \?= (\S+)$`) }
	workflowRegistry     = regexp.MustCompile(`REGISTRY: \$\{\{ vars\.REGISTRY \|\| '([^']+)' \}\}`)
	// A reference to the bundle's image or chart in some registry: host
	// (with a dot or a port), path, then the name.
	imageReference = regexp.MustCompile(`([a-z0-9-]+(?:\.[a-z0-9-]+)+(?::[0-9]+)?(?:/[a-z0-9._-]+)*)/clusterprofile-bundle\b`)
	chartReference = regexp.MustCompile(`oci://([^\s"'/]+(?:/[^\s"'/]+)*)/charts/clusterprofile-manager\b`)
)

// TestEveryImageReferenceNamesTheReleaseRepository: the chart's default
// image is where a release pushes it (the Makefile's and the release
// workflow's REGISTRY), and every reference to the bundle's image or chart
// in the repository (values, manifests, the manager's default agent image,
// docs, examples, workflows) names that repository, so that what a user
// copies pulls an image that exists. Example registries (.example hosts),
// the local test registry and the Go module and GitHub paths are not image
// references.
func TestEveryImageReferenceNamesTheReleaseRepository(t *testing.T) {
	root := repoRoot(t)
	read := func(path string) string { return readRepoFile(t, root, path) }
	image := submatch(t, chartImageRepository, read("charts/clusterprofile-manager/values.yaml"), "values.yaml's image.repository")
	makefile := read("Makefile")
	registry := submatch(t, makeVariable("REGISTRY"), makefile, "the Makefile's REGISTRY")
	if want := registry + "/clusterprofile-bundle"; image != want {
		t.Errorf("values.yaml's image.repository is %q, but a release pushes to %q", image, want)
	}
	if got := submatch(t, workflowRegistry, read(".github/workflows/release.yaml"), "release.yaml's default REGISTRY"); got != registry {
		t.Errorf("release.yaml's default REGISTRY is %q, the Makefile's %q", got, registry)
	}
	source := submatch(t, makeVariable("IMAGE_SOURCE"), makefile, "the Makefile's IMAGE_SOURCE")
	runbooks := submatch(t, regexp.MustCompile(`(?m)^\s*runbookBaseURL: (\S+)\s*$`), read("charts/clusterprofile-manager/values.yaml"), "runbookBaseURL")
	if want := source + "/blob/main/docs/operations.md"; runbooks != want {
		t.Errorf("the chart's runbookBaseURL is %q, want the repository's %q", runbooks, want)
	}

	found := 0
	for path, text := range textFiles(t, root) {
		for _, m := range imageReference.FindAllStringSubmatch(text, -1) {
			if notAnImageRepository(m[1]) {
				continue
			}
			found++
			if m[0] != image {
				t.Errorf("%s names the image %q, want %q", path, m[0], image)
			}
		}
		for _, m := range chartReference.FindAllStringSubmatch(text, -1) {
			if !strings.ContainsAny(m[1], ".:") || strings.ContainsAny(m[1], "<$") || notAnImageRepository(m[1]) {
				continue // a placeholder, a variable or an example
			}
			found++
			if m[1] != registry {
				t.Errorf("%s names the chart in %q, want %q", path, m[1], registry)
			}
		}
	}
	if found < 5 {
		t.Errorf("found %d references to the image or chart: the patterns no longer match the repository", found)
	}
}

// notAnImageRepository: the module path, GitHub's, the local test
// registry's and documentation's example hosts.
func notAnImageRepository(prefix string) bool {
	host, _, _ := strings.Cut(prefix, "/")
	return prefix == "open-cluster-management.io" || host == "github.com" ||
		strings.Contains(prefix, "example") || strings.HasPrefix(host, "127.0.0.1") || strings.HasPrefix(host, "localhost")
}

func submatch(t *testing.T, re *regexp.Regexp, text, what string) string {
	t.Helper()
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s not found (%s)", what, re)
	}
	return m[1]
}

// textFiles maps the repository's text files (not bin/, hidden directories
// or go.sum) to their contents.
func textFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".github" && d.Name() != ".ci" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "go.sum" || d.Type()&fs.ModeType != 0 {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.ContainsRune(string(data[:min(len(data), 8000)]), 0) {
			files[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
