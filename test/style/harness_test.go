package style_test

import (
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// harnessDir is the local OCM harness, relative to the repository.
const harnessDir = "test/ocmlocal"

// harnessFileLimit is how long a file of the local OCM harness may grow
// before it is split by what it does.
const harnessFileLimit = 400

// harnessLayers orders the packages of the local OCM harness, lowest
// first (each named exactly, relative to the repository). A package
// imports only harness packages of the layers below its own, so each part
// can be read, and tested, without the parts that use it.
var harnessLayers = []struct {
	what     string
	packages []string
}{
	{"processes, key material, the programs the harness runs, and the pod runner's side of a sandbox",
		[]string{"test/ocmlocal/process", "test/ocmlocal/pki", "test/ocmlocal/binaries", "test/ocmlocal/podsandbox"}},
	{"one control plane, a pod sandbox, images and the registry",
		[]string{"test/ocmlocal/controlplane", "test/ocmlocal/sandbox", "test/ocmlocal/images", "test/ocmlocal/registry", "test/ocmlocal/cmd/ocmlocal-pod"}},
	{"the kubelet and Helm", []string{"test/ocmlocal/kubelet", "test/ocmlocal/charts"}},
	{"what runs on the kubelets: the service network, OCM and its addons",
		[]string{"test/ocmlocal/servicenet", "test/ocmlocal/ocm", "test/ocmlocal/addons"}},
	{"the consumers", []string{"test/ocmlocal/kueue", "test/ocmlocal/argocdcheck", "test/ocmlocal/docsconsumer"}},
	{"the environment that wires them", []string{"test/ocmlocal"}},
}

// harnessLayerOf is the index in harnessLayers of the package in dir, -1
// when no entry names it.
func harnessLayerOf(dir string) int {
	for i, l := range harnessLayers {
		for _, p := range l.packages {
			if dir == p {
				return i
			}
		}
	}
	return -1
}

// harnessPackages parses the non-test Go files of every package of the
// harness, with their comments, by directory (relative to the repository)
// and file name.
func harnessPackages(t *testing.T) map[string]map[string]*ast.File {
	t.Helper()
	byDir := parsedPackages(t, harnessDir)
	if len(byDir) < len(harnessLayers) {
		t.Fatalf("%d packages under %s: has the harness moved?", len(byDir), harnessDir)
	}
	return byDir
}

// TestHarnessFilesAreShort: no Go file of the local OCM harness (its tests
// too) is over harnessFileLimit lines, so a reader finds the kubelet, the
// images, the OCM install and the consumers each in files of their own.
func TestHarnessFilesAreShort(t *testing.T) {
	root := framework.RepoRoot()
	err := filepath.WalkDir(filepath.Join(root, harnessDir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if lines := strings.Count(string(data), "\n"); lines > harnessFileLimit {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines, over %d: split it by what it does", rel, lines, harnessFileLimit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHarnessPackagesSayWhatTheyDo: every package of the harness has a
// package doc comment ("Package kubelet plays ..."; a command's, "Command
// ocmlocal-pod runs ..."), so a reader can name each part before reading
// it.
func TestHarnessPackagesSayWhatTheyDo(t *testing.T) {
	var undocumented []string
	for dir, files := range harnessPackages(t) {
		var want string
		documented := false
		for _, f := range files {
			want = "Package " + f.Name.Name + " "
			if f.Name.Name == "main" {
				want = "Command " + filepath.Base(dir) + " "
			}
			documented = documented || (f.Doc != nil && strings.HasPrefix(f.Doc.Text(), want))
		}
		if !documented {
			undocumented = append(undocumented, dir+` has no package doc comment ("// `+want+`..."): say what this part of the harness does`)
		}
	}
	sort.Strings(undocumented)
	for _, u := range undocumented {
		t.Error(u)
	}
}

// TestHarnessImportsPointDown: no package of the harness imports one of
// its own layer or above (harnessLayers); tests are free.
func TestHarnessImportsPointDown(t *testing.T) {
	var problems []string
	for dir, files := range harnessPackages(t) {
		own := harnessLayerOf(dir)
		if own < 0 {
			problems = append(problems, dir+" belongs to no layer: add it to harnessLayers in test/style/harness_test.go")
			continue
		}
		for _, f := range files {
			for _, imp := range imports(f) {
				target := strings.TrimPrefix(imp, module)
				if target == imp || !(target == harnessDir || strings.HasPrefix(target, harnessDir+"/")) {
					continue
				}
				if other := harnessLayerOf(target); other < 0 || other >= own {
					problems = append(problems, dir+" ("+harnessLayers[own].what+") imports "+target+", which is not below it")
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}
