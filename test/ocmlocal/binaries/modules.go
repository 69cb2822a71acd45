//go:build linux

package binaries

import (
	"path/filepath"
	"sync"

	"open-cluster-management.io/clusterprofile-bundle/test/internal/gomod"
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
	dir, err := gomod.Dir(module)
	if err != nil {
		return "", err
	}
	m.dirs[module] = dir
	return dir, nil
}

// File joins a path inside a module's directory.
func (m *Modules) File(module, path string) (string, error) {
	dir, err := m.Dir(module)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path), nil
}
