// Package style_test holds the project to the shape it chose (see
// CONTRIBUTING.md, "Conventions"): functions that read in one screen and
// packages that say what they own.
package style_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// maxFunctionLines bounds every function outside tests.
const maxFunctionLines = 60

// sources parses every non-test Go file of the module, by directory.
func sources(t *testing.T) map[string][]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	byDir := map[string][]*ast.File{}
	root := framework.RepoRoot()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		byDir[rel] = append(byDir[rel], f)
		lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil && lines(fn) > maxFunctionLines {
				t.Errorf("%s: %s is %d lines long (at most %d)", fset.Position(fn.Pos()), fn.Name.Name, lines(fn), maxFunctionLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byDir
}

// TestShape: no function over 60 lines outside tests, and a doc comment on
// every package but the mains (whose command comment lives on main.go).
func TestShape(t *testing.T) {
	var undocumented []string
	for dir, files := range sources(t) {
		documented := false
		for _, f := range files {
			documented = documented || f.Doc != nil
		}
		if !documented {
			undocumented = append(undocumented, dir)
		}
	}
	sort.Strings(undocumented)
	for _, dir := range undocumented {
		t.Errorf("package %s has no doc comment saying what it owns", dir)
	}
}
