package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	syncLabel              = "authentication.open-cluster-management.io/sync-to-clusterprofile"
	consumerNamespacesNote = "clusterprofile.open-cluster-management.io/consumer-namespaces"
)

var yamlBlock = regexp.MustCompile("(?ms)^ *```ya?ml\n(.*?)^ *```")

// TestEveryCopiedManagedServiceAccountIsScoped: a ManagedServiceAccount the
// docs give to copy (a YAML block in Markdown or a file under
// docs/examples) that has its token synced names the namespaces that may
// receive it. An unscoped one would, with the default unscopedTokens:
// everywhere, put each consumer's token in every other consumer's namespace.
func TestEveryCopiedManagedServiceAccountIsScoped(t *testing.T) {
	root := repoRoot(t)
	sources := map[string][]string{}
	for _, md := range markdownFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, md))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
			sources[md] = append(sources[md], dedent(m[1]))
		}
	}
	examples, err := filepath.Glob(filepath.Join(root, "docs", "examples", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range examples {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		sources[rel] = append(sources[rel], string(data))
	}

	synced := 0
	for source, texts := range sources {
		for _, text := range texts {
			for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
				var msa struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Name        string            `json:"name"`
						Labels      map[string]string `json:"labels"`
						Annotations map[string]string `json:"annotations"`
					} `json:"metadata"`
				}
				if yaml.Unmarshal([]byte(doc), &msa) != nil || msa.Kind != "ManagedServiceAccount" || msa.Metadata.Labels[syncLabel] != "true" {
					continue
				}
				synced++
				if strings.TrimSpace(msa.Metadata.Annotations[consumerNamespacesNote]) == "" {
					t.Errorf("%s: ManagedServiceAccount %q has its token synced but names no %s", source, msa.Metadata.Name, consumerNamespacesNote)
				}
			}
		}
	}
	if synced < 2 {
		t.Errorf("found %d synced ManagedServiceAccounts in the docs: the extraction no longer matches them", synced)
	}
}

// dedent removes the indentation of a block nested in a list item.
func dedent(block string) string {
	lines := strings.Split(block, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}
