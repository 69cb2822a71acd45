package style_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// module is this project's import path.
const module = "open-cluster-management.io/clusterprofile-bundle/"

// layers orders the packages under pkg/, lowest first; a package (and the
// packages below its directory) belongs to the layer of the longest entry
// that names it. A package imports only from layers below its own: the
// arrows of the import graph all point down, so a helper never drags in
// what it helps.
var layers = []struct {
	what     string
	packages []string
}{
	{"helpers that know nothing of this project", []string{"pkg/util"}},
	{"the writers' contract on field managers", []string{"pkg/fieldmanager"}},
	{"contracts and leaves", []string{"pkg/agentapi", "pkg/version", "pkg/features", "pkg/metrics", "pkg/scheme",
		"pkg/cpcreds", "pkg/clusterprofile/profilewrite", "pkg/metricsauth"}},
	{"the one writer of ClusterProfiles", []string{"pkg/clusterprofile"}},
	{"the one authority on membership", []string{"pkg/membership"}},
	{"the capability runner, and the fake client of unit tests", []string{"pkg/capability", "pkg/internal/fakeclient"}},
	{"what capabilities share", []string{"pkg/coexistence"}},
	{"the capabilities and the agent", []string{"pkg/mirror", "pkg/accessprovider", "pkg/credsync", "pkg/multikueue", "pkg/argocd", "pkg/placementdecision",
		"pkg/addon", "pkg/agent", "pkg/installcheck"}},
	{"the managers' wiring and the tools", []string{"pkg/hubmanager", "pkg/doctor"}},
}

// layerOf is the index in layers of the package in dir (relative to the
// repository), -1 when no entry names it.
func layerOf(dir string) int {
	layer, longest := -1, 0
	for i, l := range layers {
		for _, p := range l.packages {
			if (dir == p || strings.HasPrefix(dir, p+"/")) && len(p) > longest {
				layer, longest = i, len(p)
			}
		}
	}
	return layer
}

// TestImportsPointDown: no package under pkg/ imports one of its own layer
// or above (pkg/util's helpers may use each other), nor anything under
// cmd/, hack/ or test/. Tests are free: only the non-test files count.
func TestImportsPointDown(t *testing.T) {
	var problems []string
	for dir, files := range packageFiles(t) {
		own := layerOf(dir)
		if own < 0 {
			problems = append(problems, dir+" belongs to no layer: add it to layers in test/style/layers_test.go")
			continue
		}
		for name, f := range files {
			for _, imp := range imports(f) {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				target := strings.TrimPrefix(imp, module)
				if !strings.HasPrefix(target, "pkg/") {
					problems = append(problems, dir+"/"+name+" imports "+target+", outside pkg/")
					continue
				}
				other := layerOf(target)
				if other < own || (other == own && own == 0) {
					continue
				}
				problems = append(problems, dir+"/"+name+" ("+layers[own].what+") imports "+target+
					" ("+layerName(other)+"), which is not below it")
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func layerName(i int) string {
	if i < 0 {
		return "no layer"
	}
	return layers[i].what
}

func imports(f *ast.File) []string {
	var out []string
	for _, spec := range f.Imports {
		if path, err := strconv.Unquote(spec.Path.Value); err == nil {
			out = append(out, path)
		}
	}
	return out
}

// TestTestsDoNotImportHack: hack/'s programs may use test/'s harness (the
// demo runs the local OCM), but nothing under test/ imports hack/, so the
// two never depend on each other; what both use lives under internal/.
func TestTestsDoNotImportHack(t *testing.T) {
	root := framework.RepoRoot()
	err := filepath.WalkDir(filepath.Join(root, "test"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range imports(f) {
			if strings.HasPrefix(imp, module+"hack/") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: move what test/ needs from hack/ under internal/", rel, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
