//go:build linux

package binaries

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
)

// Modules finds module directories in the Go module cache: the modules
// this repository pins (go list -m), and OCM itself, which it does not
// require (the directory hack/ocmlocal.sh recorded).
type Modules struct {
	mu   sync.Mutex
	dirs map[string]string
}

// NewModules knows OCM's module at the release ocm.
func NewModules(ocm Release) *Modules {
	return &Modules{dirs: map[string]string{OCMModule: ocm.Dir}}
}

// Dir is a module's directory.
func (m *Modules) Dir(module string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.dirs[module]; ok {
		return d, nil
	}
	cmd := exec.Command("go", "list", "-m", "-json", module)
	cmd.Dir = RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w: %s", module, err, stderr.String())
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("module %s is not downloaded (%v); run `go mod download`", module, err)
	}
	m.dirs[module] = info.Dir
	return info.Dir, nil
}

// File joins a path inside a module's directory.
func (m *Modules) File(module, path string) (string, error) {
	dir, err := m.Dir(module)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path), nil
}
