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

// Pinned upstream releases; hack/ocmlocal.sh builds their programs at the
// same versions.
const (
	ocmModule     = "open-cluster-management.io/ocm"
	ocmVersion    = "v1.2.0"
	ocmAPIModule  = "open-cluster-management.io/api"
	msaModule     = "open-cluster-management.io/managed-serviceaccount"
	proxyModule   = "open-cluster-management.io/cluster-proxy"
	profileModule = "sigs.k8s.io/cluster-inventory-api"
)

// The programs hack/ocmlocal.sh builds into bin/ocm: always needed, and
// per addon.
var (
	corePrograms  = []string{"kube-controller-manager", "registration-operator", "registration", "placement", "addon"}
	msaPrograms   = []string{"msa"}
	proxyPrograms = []string{"cluster-proxy-manager", "cluster-proxy", "cluster-proxy-addon-agent", "proxy-server", "proxy-agent"}
)

type binaries struct {
	ocmDir, etcd, kubeAPIServer, podRunner string
}

func (b binaries) path(name string) string { return filepath.Join(b.ocmDir, name) }

// RepoRoot is the root of this repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BinariesBuilt tells whether every program Start can need is there, and
// if not, which is missing and how to build it.
func BinariesBuilt() error {
	_, err := findBinaries(Options{ManagedServiceAccount: true, ClusterProxy: true})
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
	for _, p := range programs {
		need = append(need, b.path(p))
	}
	for _, path := range need {
		if _, err := os.Stat(path); err != nil {
			return b, fmt.Errorf("%w: %s is missing; run `make ocm-binaries` (first build about 20 minutes, then cached)", ErrBinariesMissing, path)
		}
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
// require (go mod download at the pinned version; already downloaded by
// hack/ocmlocal.sh).
type moduleDirs struct {
	mu   sync.Mutex
	dirs map[string]string
}

func newModuleDirs() *moduleDirs { return &moduleDirs{dirs: map[string]string{}} }

func (m *moduleDirs) dir(module string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.dirs[module]; ok {
		return d, nil
	}
	var cmd *exec.Cmd
	if module == ocmModule {
		cmd = exec.Command("go", "mod", "download", "-json", module+"@"+ocmVersion)
		cmd.Dir = os.TempDir()
	} else {
		cmd = exec.Command("go", "list", "-m", "-json", module)
		cmd.Dir = RepoRoot()
	}
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
