// Package framework starts a real control plane (kube-apiserver and etcd,
// built by `make envtest`) with the CRDs this project works with, and runs the
// same manager as cmd/clusterprofile-manager against it.
package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/internal/gomod"
)

// Module versions are pinned in go.mod; CRDs are read from their module
// directories, so tests always use the schema of the pinned release.
const (
	ocmAPIModule           = "open-cluster-management.io/api"
	clusterInventoryModule = "sigs.k8s.io/cluster-inventory-api"
	clusterProxyModule     = "open-cluster-management.io/cluster-proxy"
	msaModule              = "open-cluster-management.io/managed-serviceaccount"
)

// Env is a running control plane.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	// Client talks to the API server directly (no cache).
	Client client.Client
}

// Options change what Start installs.
type Options struct {
	// AtomicClusterProfileCRD installs the ClusterProfile CRD without list-map
	// markers on its status lists, as older copies (OCM's operator) have.
	AtomicClusterProfileCRD bool
	// WithoutCRDs leaves these CRDs (by name) out, for tests that install
	// them later (InstallCRD).
	WithoutCRDs []string
	// KueueCRDs also installs Kueue's MultiKueue CRDs (KueueCRDFiles).
	KueueCRDs bool
	// APIServerFlags are extra kube-apiserver flags (name without dashes:
	// value), e.g. the benchmark's audit log.
	APIServerFlags map[string]string
}

// Start launches kube-apiserver and etcd and installs the CRDs.
func Start(opts Options) (*Env, error) {
	logger := zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(logLevel()))
	logf.SetLogger(logger)
	klog.SetLogger(logger) // the addon-framework logs through klog
	assets, err := BinaryAssetsDir()
	if err != nil {
		return nil, err
	}
	crds, err := CRDs(opts)
	if err != nil {
		return nil, err
	}
	crds = slices.DeleteFunc(crds, func(crd *apiextensionsv1.CustomResourceDefinition) bool {
		return slices.Contains(opts.WithoutCRDs, crd.Name)
	})
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: crds},
		ErrorIfCRDPathMissing: true,
	}
	if len(opts.APIServerFlags) > 0 {
		args := env.ControlPlane.GetAPIServer().Configure()
		for flag, value := range opts.APIServerFlags {
			args.Set(flag, value)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting control plane from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{env: env, Config: cfg, Client: c}, nil
}

// InstallCRD installs one of the CRDs the tests use (by name), as a
// component's install would while the manager runs, and waits until it is
// served.
func (e *Env) InstallCRD(name string) error {
	crds, err := CRDs(Options{})
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if crd.Name == name {
			_, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
			return err
		}
	}
	return fmt.Errorf("no CRD %s among the test CRDs", name)
}

// EtcdURL is the address of the control plane's etcd, for a test that runs
// a kube-apiserver of its own on the same store.
func (e *Env) EtcdURL() string { return e.env.ControlPlane.Etcd.URL.String() }

// Stop shuts the control plane down.
func (e *Env) Stop() error { return e.env.Stop() }

// Run is a TestMain body: it starts a control plane, runs the tests, stops it.
func Run(m *testing.M, opts Options, env **Env) int {
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping control plane:", err)
	}
	return code
}

func logLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_LOGS") != "" {
		return -4
	}
	return 1 // errors only; managers log a lot at info
}

// RepoRoot is the root of this repository.
func RepoRoot() string { return gomod.RepoRoot() }

// BinaryAssetsDir finds kube-apiserver and etcd: $KUBEBUILDER_ASSETS, else bin/envtest.
func BinaryAssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin", "envtest")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("test control plane binary %s not found in %s; run `make envtest` first", b, dir)
		}
	}
	return dir, nil
}

// ModuleDir returns where the Go module cache holds the pinned version of a module.
func ModuleDir(module string) (string, error) { return gomod.Dir(module) }

// CRDFiles lists the CRD manifests the tests install, from the pinned modules.
func CRDFiles() ([]string, error) {
	ocm, err := ModuleDir(ocmAPIModule)
	if err != nil {
		return nil, err
	}
	inventory, err := ModuleDir(clusterInventoryModule)
	if err != nil {
		return nil, err
	}
	proxy, err := ModuleDir(clusterProxyModule)
	if err != nil {
		return nil, err
	}
	msa, err := ModuleDir(msaModule)
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(ocm, "cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml"),
		filepath.Join(ocm, "cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml"),
		filepath.Join(ocm, "cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml"),
		filepath.Join(ocm, "cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml"),
		filepath.Join(ocm, "operator/v1/0000_01_operator.open-cluster-management.io_clustermanagers.crd.yaml"),
		filepath.Join(ocm, "addon/v1beta1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml"),
		filepath.Join(ocm, "addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml"),
		filepath.Join(ocm, "addon/v1beta1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml"),
		filepath.Join(ocm, "work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml"),
		filepath.Join(ocm, "cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml"),
		filepath.Join(ocm, "cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml"),
		filepath.Join(inventory, "config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml"),
		filepath.Join(inventory, "config/crd/bases/multicluster.x-k8s.io_placementdecisions.yaml"),
		filepath.Join(proxy, "hack/crd/bases/proxy.open-cluster-management.io_managedproxyconfigurations.yaml"),
		filepath.Join(msa, "config/crd/bases/authentication.open-cluster-management.io_managedserviceaccounts.yaml"),
	}, nil
}

// KueueModule is the Kueue release whose CRDs the tests install. Kueue is
// not a dependency of this module (pkg/multikueue does not import its
// types), so it is fetched into the module cache by version.
const KueueModule = "sigs.k8s.io/kueue@v0.16.1"

// KueueCRDFiles are the MultiKueueCluster and MultiKueueConfig CRDs of
// KueueModule.
func KueueCRDFiles() ([]string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", KueueModule)
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s: %w", KueueModule, err)
	}
	var module struct{ Dir, Error string }
	if err := json.Unmarshal(out, &module); err != nil || module.Dir == "" {
		return nil, fmt.Errorf("go mod download %s: no module directory (%v) %s", KueueModule, err, module.Error)
	}
	bases := filepath.Join(module.Dir, "config", "components", "crd", "bases")
	return []string{
		filepath.Join(bases, "kueue.x-k8s.io_multikueueclusters.yaml"),
		filepath.Join(bases, "kueue.x-k8s.io_multikueueconfigs.yaml"),
	}, nil
}

// CRDs reads the CRD manifests, stripping the status list-map markers of the
// ClusterProfile CRD when asked to.
func CRDs(opts Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := CRDFiles()
	if err != nil {
		return nil, err
	}
	if opts.KueueCRDs {
		kueue, err := KueueCRDFiles()
		if err != nil {
			return nil, err
		}
		files = append(files, kueue...)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		read := envtest.CRDInstallOptions{Paths: []string{f}, ErrorIfPathMissing: true}
		if err := envtest.ReadCRDFiles(&read); err != nil {
			return nil, err
		}
		if len(read.CRDs) == 0 {
			return nil, fmt.Errorf("no CRD in %s", f)
		}
		crds = append(crds, read.CRDs...)
	}
	for _, crd := range crds {
		storeAddonAPIsAsV1beta1(crd)
	}
	if opts.AtomicClusterProfileCRD {
		for _, crd := range crds {
			if crd.Name == "clusterprofiles.multicluster.x-k8s.io" {
				utiltesting.StripStatusListMaps(crd)
			}
		}
	}
	return crds, nil
}

// storeAddonAPIsAsV1beta1 makes v1beta1 the storage version of OCM's addon
// APIs. Their CRDs store v1alpha1 and rely on OCM's conversion webhook, which
// a test control plane does not run; without it, fields that only v1beta1
// has (such as status.registrations[].type, which the addon-framework
// writes) would be pruned on every write.
func storeAddonAPIsAsV1beta1(crd *apiextensionsv1.CustomResourceDefinition) {
	if crd.Spec.Group != "addon.open-cluster-management.io" {
		return
	}
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == "v1beta1"
	}
}

// Eventually defaults for waiting on controllers.
const (
	Timeout  = 20 * time.Second
	Interval = 50 * time.Millisecond
)

// ContextFor returns a context cancelled when the test ends.
func ContextFor(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// AdminKubeconfig returns a kubeconfig for a cluster-admin user of the
// control plane, for processes (kubectl, the manager binary) outside the test.
func (e *Env) AdminKubeconfig() ([]byte, error) {
	return e.kubeconfig(envtest.User{Name: "admin", Groups: []string{"system:masters"}})
}

// UserKubeconfig returns a kubeconfig for a user with no rights of its own,
// for tests that grant exactly what a component needs.
func (e *Env) UserKubeconfig(name string) ([]byte, error) {
	return e.kubeconfig(envtest.User{Name: name})
}

func (e *Env) kubeconfig(u envtest.User) ([]byte, error) {
	user, err := e.env.AddUser(u, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", u.Name, err)
	}
	return user.KubeConfig()
}
