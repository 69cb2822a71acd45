//go:build linux

package ocmlocal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Upstream modules. OCM's release is the one hack/ocmlocal.sh built
// (OCM_VERSION there, recorded in bin/ocm/ocm-module.json); the others are
// pinned by this repository's go.mod.
const (
	ocmModule     = "open-cluster-management.io/ocm"
	ocmAPIModule  = "open-cluster-management.io/api"
	msaModule     = "open-cluster-management.io/managed-serviceaccount"
	proxyModule   = "open-cluster-management.io/cluster-proxy"
	profileModule = "sigs.k8s.io/cluster-inventory-api"
)

// The programs hack/ocmlocal.sh builds into bin/ocm: always needed, and
// per addon.
var (
	corePrograms  = []string{"kube-controller-manager", "registration-operator", "registration", "placement", "addon", "work", ocmModuleFile}
	msaPrograms   = []string{"msa"}
	proxyPrograms = []string{"cluster-proxy-manager", "cluster-proxy", "cluster-proxy-addon-agent", "proxy-server", "proxy-agent"}
)

// ocmModuleFile records OCM's module as hack/ocmlocal.sh built it (`go mod
// download -json`): its version, which the images mapped to the binaries
// carry, and its directory, where the operators' manifests are.
const ocmModuleFile = "ocm-module.json"

type binaries struct {
	ocmDir, etcd, kubeAPIServer, podRunner string
	// ocm is the OCM release the binaries were built from.
	ocm ocmRelease
	// kueue is Kueue's release (with Options.Kueue), and kueueUpgrade the
	// release UpgradeKueue moves it to.
	kueue, kueueUpgrade ocmRelease
}

type ocmRelease struct{ Version, Dir string }

func (b binaries) path(name string) string { return filepath.Join(b.ocmDir, name) }

// RepoRoot is the root of this repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BinariesBuilt tells whether every program Start needs with both addons
// is there, and if not, which is missing and how to build it.
func BinariesBuilt() error {
	return BinariesBuiltFor(Options{ManagedServiceAccount: true, ClusterProxy: true})
}

// BinariesBuiltFor tells whether the programs Start needs for opts are
// there (e.g. bin/ocm/kueue with Kueue).
func BinariesBuiltFor(opts Options) error {
	_, err := findBinaries(opts)
	return err
}

func findBinaries(opts Options) (binaries, error) {
	envtestDir := envOr("KUBEBUILDER_ASSETS", filepath.Join(RepoRoot(), "bin", "envtest"))
	b := binaries{
		ocmDir:        envOr("OCM_BIN_DIR", filepath.Join(RepoRoot(), "bin", "ocm")),
		etcd:          filepath.Join(envtestDir, "etcd"),
		kubeAPIServer: filepath.Join(envtestDir, "kube-apiserver"),
	}
	need := []string{b.etcd, b.kubeAPIServer}
	programs := corePrograms
	if opts.ManagedServiceAccount {
		programs = append(programs, msaPrograms...)
	}
	if opts.ClusterProxy {
		programs = append(programs, proxyPrograms...)
	}
	if opts.Kueue {
		programs = append(programs, kueuePrograms...)
	}
	for _, p := range programs {
		need = append(need, b.path(p))
	}
	for _, path := range need {
		if _, err := os.Stat(path); err != nil {
			return b, fmt.Errorf("%w: %s is missing; run `make ocm-binaries` (first build about 45 minutes, then cached)", ErrBinariesMissing, path)
		}
	}
	raw, err := os.ReadFile(b.path(ocmModuleFile))
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(raw, &b.ocm); err != nil || b.ocm.Version == "" || b.ocm.Dir == "" {
		return b, fmt.Errorf("%w: %s names no OCM version and directory (%v); run `make ocm-binaries`", ErrBinariesMissing, b.path(ocmModuleFile), err)
	}
	if opts.Kueue {
		if b.kueue, err = readKueueModule(b.path(kueueModuleFile)); err != nil {
			return b, err
		}
		if b.kueueUpgrade, err = readKueueModule(b.path(kueueUpgradeModuleFile)); err != nil {
			return b, err
		}
	}
	if opts.OCMVersion != "" && opts.OCMVersion != b.ocm.Version {
		return b, fmt.Errorf("%w: %s holds OCM %s, not %s; run `make ocm-binaries OCM_VERSION=%s`",
			ErrBinariesMissing, b.ocmDir, b.ocm.Version, opts.OCMVersion, opts.OCMVersion)
	}
	return b, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// moduleDirs finds module directories in the Go module cache: the modules
// this repository pins (go list -m), and OCM itself, which it does not
// require (the directory hack/ocmlocal.sh recorded).
type moduleDirs struct {
	mu   sync.Mutex
	dirs map[string]string
}

func newModuleDirs(ocm ocmRelease) *moduleDirs {
	return &moduleDirs{dirs: map[string]string{ocmModule: ocm.Dir}}
}

func (m *moduleDirs) dir(module string) (string, error) {
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

// file joins a path inside a module's directory.
func (m *moduleDirs) file(module, path string) (string, error) {
	dir, err := m.dir(module)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path), nil
}

// buildPodRunner builds the ocmlocal-pod program into the work directory
// (a second or two once the build cache has it).
func buildPodRunner(workDir string) (string, error) {
	out := filepath.Join(workDir, "bin", "ocmlocal-pod")
	cmd := exec.Command("go", "build", "-o", out, "./test/ocmlocal/cmd/ocmlocal-pod")
	cmd.Dir = RepoRoot()
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ocmlocal-pod: %w: %s", err, msg)
	}
	return out, nil
}
