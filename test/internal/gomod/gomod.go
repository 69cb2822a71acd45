// Package gomod finds this repository's root and where the Go module cache
// holds the exact versions of the modules it pins (whose zips carry the CRDs
// and charts the suites install). The integration framework and the
// test/ocmlocal harness both use it and must not import each other: the
// framework pulls in all of pkg/.
package gomod

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// RepoRoot is the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

var dirs sync.Map

// Dir is where the module cache holds the pinned version of module
// (`go list -m`, asked once per module and process).
func Dir(module string) (string, error) {
	if dir, ok := dirs.Load(module); ok {
		return dir.(string), nil
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w: %s", module, err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded; run `go mod download`", module)
	}
	dirs.Store(module, dir)
	return dir, nil
}
