package style_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// packageFiles parses the non-test Go files of every package under pkg/,
// by directory (relative to the repository) and file name.
func packageFiles(t *testing.T) map[string]map[string]*ast.File {
	return parsedPackages(t, "pkg")
}

// parsedPackages parses the non-test Go files of every package under dir
// (relative to the repository), with their comments, by directory
// (relative to the repository) and file name.
func parsedPackages(t *testing.T, dir string) map[string]map[string]*ast.File {
	t.Helper()
	root := framework.RepoRoot()
	byDir := map[string]map[string]*ast.File{}
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if byDir[rel] == nil {
			byDir[rel] = map[string]*ast.File{}
		}
		byDir[rel][filepath.Base(path)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byDir
}

// returnsCapability tells whether fn is a function returning a
// capability.Capability: what makes its package a capability.
func returnsCapability(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
		return false
	}
	sel, ok := fn.Type.Results.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "capability" && sel.Sel.Name == "Capability"
}

// TestCapabilityLayout: every capability package (one with a function
// returning a capability.Capability) keeps what the manager starts it with
// in capability.go: those functions, its Options, its exported Setup, and
// its Teardown when it has one, both of one shape (capabilitySignature). The rest of the package has its usual places
// (controller.go, handlers.go, desired.go, plan.go, reports.go,
// constants.go), so a reader finds the way in to each capability in the
// same file.
func TestCapabilityLayout(t *testing.T) {
	var capabilities []string
	for dir, files := range packageFiles(t) {
		where := map[string]string{} // function name -> file
		var shapes []string          // Setup and Teardown of another shape
		isCapability := false
		for name, f := range files {
			for _, decl := range f.Decls {
				if declaresType(decl, "Options") {
					where["Options"] = name
				}
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil {
					continue
				}
				switch {
				case returnsCapability(fn):
					isCapability = true
					where[fn.Name.Name] = name
				case fn.Name.Name == "Setup" || fn.Name.Name == "Teardown":
					where[fn.Name.Name] = name
					if got := signature(fn); got != capabilitySignature {
						shapes = append(shapes, fmt.Sprintf("%s: %s%s, want %s%s", dir, fn.Name.Name, got, fn.Name.Name, capabilitySignature))
					}
				}
			}
		}
		if !isCapability {
			continue
		}
		for _, shape := range shapes {
			t.Error(shape)
		}
		capabilities = append(capabilities, dir)
		for _, required := range []string{"Setup", "Options"} {
			if _, ok := where[required]; !ok {
				t.Errorf("capability package %s has no %s", dir, required)
			}
		}
		for fn, file := range where {
			if file != "capability.go" {
				t.Errorf("%s: %s is in %s, want capability.go", dir, fn, file)
			}
		}
	}
	sort.Strings(capabilities)
	if len(capabilities) == 0 {
		t.Fatal("no capability package found: has capability.Capability moved?")
	}
	t.Logf("capability packages: %s", strings.Join(capabilities, ", "))
}

// declaresType tells whether decl declares the type name.
func declaresType(decl ast.Decl, name string) bool {
	gen, ok := decl.(*ast.GenDecl)
	if !ok || gen.Tok != token.TYPE {
		return false
	}
	for _, spec := range gen.Specs {
		if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.Name == name {
			return true
		}
	}
	return false
}

// capabilitySignature is the one shape of every capability's Setup and
// Teardown.
const capabilitySignature = "(context.Context, ctrl.Manager, Options) error"

// signature renders fn's parameter and result types, e.g.
// "(context.Context, ctrl.Manager, Options) error".
func signature(fn *ast.FuncDecl) string {
	var params, results []string
	for _, field := range fn.Type.Params.List {
		for range max(len(field.Names), 1) {
			params = append(params, types.ExprString(field.Type))
		}
	}
	if fn.Type.Results != nil {
		for _, field := range fn.Type.Results.List {
			results = append(results, types.ExprString(field.Type))
		}
	}
	return "(" + strings.Join(params, ", ") + ") " + strings.Join(results, ", ")
}
