//go:build linux

// Package binaries finds the programs the local OCM harness runs: the
// control plane's (bin/envtest, `make envtest`), OCM's, the addons' and
// Kueue's (bin/ocm, `make ocm-binaries`, hack/ocmlocal.sh), and the pod
// sandbox runner it builds itself; and the Go modules whose manifests,
// CRDs and charts it applies.
package binaries

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"open-cluster-management.io/clusterprofile-bundle/test/internal/gomod"
)

// Upstream modules. OCM's release is the one hack/ocmlocal.sh built
// (OCM_VERSION there, recorded in bin/ocm/ocm-module.json); the others are
// pinned by this repository's go.mod.
const (
	OCMModule     = "open-cluster-management.io/ocm"
	MSAModule     = "open-cluster-management.io/managed-serviceaccount"
	ProxyModule   = "open-cluster-management.io/cluster-proxy"
	ProfileModule = "sigs.k8s.io/cluster-inventory-api"
)

// The programs hack/ocmlocal.sh builds into bin/ocm: always needed, and
// per addon, and Kueue's.
var (
	corePrograms  = []string{"kube-controller-manager", "registration-operator", "registration", "placement", "addon", "work", ocmModuleFile}
	msaPrograms   = []string{"msa"}
	proxyPrograms = []string{"cluster-proxy-manager", "cluster-proxy", "cluster-proxy-addon-agent", "proxy-server", "proxy-agent"}
	kueuePrograms = []string{"kueue", kueueModuleFile, KueueUpgrade, kueueUpgradeModuleFile}
)

const (
	// ocmModuleFile records OCM's module as hack/ocmlocal.sh built it (`go
	// mod download -json`): its version, which the images mapped to the
	// binaries carry, and its directory, where the operators' manifests are.
	ocmModuleFile = "ocm-module.json"
	// kueueModuleFile and kueueUpgradeModuleFile record Kueue's modules
	// (the release the harness starts with, and the one UpgradeKueue moves
	// to), whose charts the harness installs.
	kueueModuleFile = "kueue-module.json"
	// KueueUpgrade is the binary of the Kueue release UpgradeKueue moves to.
	KueueUpgrade           = "kueue-upgrade"
	kueueUpgradeModuleFile = KueueUpgrade + "-module.json"
)

// ErrMissing is returned (wrapped) when the programs are not built.
var ErrMissing = errors.New("OCM binaries not built")

// Set is where the programs are.
type Set struct {
	OCMDir, Etcd, KubeAPIServer, PodRunner string
	// OCM is the OCM release the binaries were built from.
	OCM Release
	// Kueue is Kueue's release (with Need.Kueue), and KueueUpgrade the
	// release UpgradeKueue moves it to.
	Kueue, KueueUpgrade Release
}

// Release is a module at the version hack/ocmlocal.sh built, and its
// directory in the module cache.
type Release struct{ Version, Dir string }

// Path is a program of bin/ocm.
func (b Set) Path(name string) string { return filepath.Join(b.OCMDir, name) }

// Need says which programs an environment needs besides the core ones.
type Need struct {
	ManagedServiceAccount, ClusterProxy, Kueue bool
	// OCMVersion, if set, must be the release bin/ocm was built from.
	OCMVersion string
}

// RepoRoot is the root of this repository.
func RepoRoot() string { return gomod.RepoRoot() }

// Find finds the programs need asks for, and tells which is missing and
// how to build it.
func Find(need Need) (Set, error) {
	envtestDir := envOr("KUBEBUILDER_ASSETS", filepath.Join(RepoRoot(), "bin", "envtest"))
	b := Set{
		OCMDir:        envOr("OCM_BIN_DIR", filepath.Join(RepoRoot(), "bin", "ocm")),
		Etcd:          filepath.Join(envtestDir, "etcd"),
		KubeAPIServer: filepath.Join(envtestDir, "kube-apiserver"),
	}
	for _, path := range b.needed(need) {
		if _, err := os.Stat(path); err != nil {
			return b, fmt.Errorf("%w: %s is missing; run `make ocm-binaries` (first build about 45 minutes, then cached)", ErrMissing, path)
		}
	}
	raw, err := os.ReadFile(b.Path(ocmModuleFile))
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(raw, &b.OCM); err != nil || b.OCM.Version == "" || b.OCM.Dir == "" {
		return b, fmt.Errorf("%w: %s names no OCM version and directory (%v); run `make ocm-binaries`", ErrMissing, b.Path(ocmModuleFile), err)
	}
	if need.Kueue {
		if b.Kueue, err = readKueueModule(b.Path(kueueModuleFile)); err != nil {
			return b, err
		}
		if b.KueueUpgrade, err = readKueueModule(b.Path(kueueUpgradeModuleFile)); err != nil {
			return b, err
		}
	}
	if need.OCMVersion != "" && need.OCMVersion != b.OCM.Version {
		return b, fmt.Errorf("%w: %s holds OCM %s, not %s; run `make ocm-binaries OCM_VERSION=%s`",
			ErrMissing, b.OCMDir, b.OCM.Version, need.OCMVersion, need.OCMVersion)
	}
	return b, nil
}

// needed are the paths of the programs need asks for.
func (b Set) needed(need Need) []string {
	paths := []string{b.Etcd, b.KubeAPIServer}
	programs := corePrograms
	if need.ManagedServiceAccount {
		programs = append(programs, msaPrograms...)
	}
	if need.ClusterProxy {
		programs = append(programs, proxyPrograms...)
	}
	if need.Kueue {
		programs = append(programs, kueuePrograms...)
	}
	for _, p := range programs {
		paths = append(paths, b.Path(p))
	}
	return paths
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// readKueueModule reads the Kueue release hack/ocmlocal.sh built.
func readKueueModule(path string) (Release, error) {
	var m Release
	raw, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Version == "" || m.Dir == "" {
		return m, fmt.Errorf("%w: %s names no Kueue version and directory (%v); run `make ocm-binaries`", ErrMissing, path, err)
	}
	return m, nil
}

// BuildPodRunner builds the ocmlocal-pod program into the work directory
// (a second or two once the build cache has it).
func BuildPodRunner(workDir string) (string, error) {
	out := filepath.Join(workDir, "bin", "ocmlocal-pod")
	cmd := exec.Command("go", "build", "-o", out, "./test/ocmlocal/cmd/ocmlocal-pod")
	cmd.Dir = RepoRoot()
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ocmlocal-pod: %w: %s", err, msg)
	}
	return out, nil
}
