//go:build linux

package ocmlocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/addons"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/images"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/ocm"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/sandbox"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/servicenet"
)

// Options say what Start brings up.
type Options struct {
	// Clusters is the number of managed clusters, named cluster1…clusterN
	// (default 2).
	Clusters int
	// ManagedServiceAccount installs the managed-serviceaccount addon
	// (hub manager, agent on every cluster).
	ManagedServiceAccount bool
	// ClusterProxy installs cluster-proxy (addon manager, ANP proxy-server,
	// user server on the hub, proxy and addon agents on every cluster).
	ClusterProxy bool
	// Kueue installs Kueue's manager on the hub as the docs' MultiKueue
	// recipe configures it (cp-creds copied from the bundle's image), and
	// Kueue's CRDs on every cluster (see package kueue). It needs Registry, and
	// ClusterProxy for the profiles' open-cluster-management entry.
	Kueue bool
	// ArgoCD prepares Argo CD's namespace and turns the bundle's Argo CD
	// integration on (this release's chart only: the previous one has no
	// such gate), with cp-creds from the bundle's image (see package argocdcheck).
	ArgoCD bool
	// WorkDir holds certificates, kubeconfigs, data and one log per process.
	// Default: a new temporary directory, removed by Stop unless KeepWorkDir.
	WorkDir     string
	KeepWorkDir bool
	// Progress receives one line per step (default os.Stderr).
	Progress io.Writer
	// Images maps more container images to local binaries for the kubelet,
	// e.g. this bundle's cluster-profile-agent (see AgentImage).
	Images []ImageBinary
	// RegistrationFeatureGates go into the ClusterManager's
	// spec.registrationConfiguration.featureGates (true: Enable, false:
	// Disable), as `clusteradm init --feature-gates=ClusterProfile=true`
	// writes them; the cluster-manager operator passes them to the
	// registration controller and webhook. See SetHubFeatureGates.
	RegistrationFeatureGates map[string]bool
	// Registry starts a local OCI registry (go-containerregistry's
	// pkg/registry on 127.0.0.1, see Env.Registry) and pushes the bundle's
	// image into it from ImageLayout (default bin/image, `make image`);
	// InstallBundle then points the chart's image.repository at it.
	Registry    bool
	ImageLayout string
	// PreviousRelease, with Registry, is the directory `make previous`
	// writes (bin/previous): the previous release's image and chart, which
	// the registry holds too, for InstallPreviousBundle.
	PreviousRelease string
	// OCMVersion, if set, must be the OCM release bin/ocm was built from
	// (`make ocm-binaries OCM_VERSION=...`); the operators, the images in
	// the ClusterManager and Klusterlet, and the binaries the kubelet runs
	// for them are all of that release.
	OCMVersion string
}

// Env is a running environment. Stop ends every process it started.
type Env struct {
	WorkDir string
	// Hub is the hub control plane.
	Hub *ControlPlane
	// Clusters are the managed clusters, in name order.
	Clusters []*ManagedCluster
	// Proxy is cluster-proxy's user server, when ClusterProxy is set.
	Proxy *addons.UserServer
	// Registry is the local registry, when Options.Registry is set.
	Registry *registry.Registry
	// ArgoCDPlugin is the cp-creds the bundle's Argo CD cluster Secrets
	// run, when Options.ArgoCD is set: the bundle image's, with
	// Options.Registry.
	ArgoCDPlugin string

	opts     Options
	bins     binaries.Set
	procs    *process.Group
	progress io.Writer
	modules  *binaries.Modules
	// kubeletsMu guards kubelets and serviceNets: control planes start in
	// parallel.
	kubeletsMu  sync.Mutex
	kubelets    []*kubelet.Kubelet
	serviceNets []*servicenet.Network
	// images maps containers to local binaries for every kubelet.
	images *kubelet.ImageMap
	// pulled holds the images pulled from Registry, unpacked.
	pulled *images.Store
	// publishedPorts are host ports every pod can reach at the same address.
	publishedPorts []int
	// proxyPorts: cluster-proxy's proxy-server (clients, agents) and user
	// server on the host.
	proxyPorts addons.ProxyPorts
	stopOnce   sync.Once
	// sandboxes start the kubelets' pod sandboxes.
	sandboxes *sandbox.Runner
}

// ManagedCluster is a managed cluster's control plane and its klusterlet.
type ManagedCluster struct {
	*ControlPlane
}

// ErrBinariesMissing is returned (wrapped) when the programs are not built.
var ErrBinariesMissing = binaries.ErrMissing

// ErrNotRoot is returned when the harness does not run as root: pod
// sandboxes need mount and network namespaces.
var ErrNotRoot = errors.New("the local OCM needs root for its pod sandboxes (mount and network namespaces)")

// Start brings the environment up. On error everything already started is
// stopped again.
func Start(ctx context.Context, opts Options) (env *Env, err error) {
	start := time.Now()
	e, err := newEnv(opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.progressf("start-up failed, logs in %s: %v", e.procs.LogDir, err)
			e.stop(true)
			env = nil
		}
	}()
	if opts.Registry {
		if e.Registry, err = registry.Start(registry.Options{WorkDir: e.WorkDir, ImageLayout: opts.ImageLayout,
			PreviousRelease: opts.PreviousRelease, Progress: e.progressf}); err != nil {
			return nil, err
		}
		e.pulled = images.NewStore(filepath.Join(e.WorkDir, "images"))
	}
	if opts.ClusterProxy {
		// Before any pod starts (the operators' are the first): every pod
		// reaches the proxy-server.
		if err := e.reserveProxyPorts(); err != nil {
			return nil, err
		}
	}
	if err := e.startHub(ctx); err != nil {
		return nil, err
	}
	if err := e.startClusters(ctx); err != nil {
		return nil, err
	}
	if err := e.startAddons(ctx); err != nil {
		return nil, err
	}
	if opts.Kueue {
		if err := e.startKueue(ctx); err != nil {
			return nil, err
		}
	}
	if opts.ArgoCD {
		if err := e.startArgoCD(ctx); err != nil {
			return nil, err
		}
	}
	e.progressf("environment up in %s (hub %s, %d clusters, logs in %s)", process.Since(start), e.Hub.URL, len(e.Clusters), e.procs.LogDir)
	return e, nil
}

// newEnv is an environment with its binaries found and its work directory
// made, nothing started yet.
func newEnv(opts Options) (e *Env, err error) {
	if opts.Clusters == 0 {
		opts.Clusters = 2
	}
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	e = &Env{opts: opts, progress: opts.Progress}
	if e.progress == nil {
		e.progress = os.Stderr
	}
	if e.bins, err = binaries.Find(need(opts)); err != nil {
		return nil, err
	}
	if e.WorkDir, err = workDir(opts); err != nil {
		return nil, err
	}
	if e.bins.PodRunner, err = binaries.BuildPodRunner(e.WorkDir); err != nil {
		return nil, err
	}
	e.procs = &process.Group{LogDir: filepath.Join(e.WorkDir, "logs")}
	e.sandboxes = &sandbox.Runner{WorkDir: e.WorkDir, Program: e.bins.PodRunner, Procs: e.procs}
	e.images = kubelet.NewImageMap(slices.Concat(ocm.Images(e.bins), e.defaultImages(), opts.Images)...)
	e.modules = binaries.NewModules(e.bins.OCM)
	return e, nil
}

// Stop ends every process; the work directory is removed unless KeepWorkDir.
func (e *Env) Stop() {
	e.stop(e.opts.KeepWorkDir || e.opts.WorkDir != "")
}

func (e *Env) stop(keepWorkDir bool) {
	e.stopOnce.Do(func() {
		e.kubeletsMu.Lock()
		kubelets, nets := e.kubelets, e.serviceNets
		e.kubeletsMu.Unlock()
		for _, k := range kubelets {
			k.Stop()
		}
		for _, n := range nets {
			n.Close()
		}
		e.procs.StopAll()
		if e.Registry != nil {
			e.Registry.Close()
		}
		if !keepWorkDir {
			_ = os.RemoveAll(e.WorkDir)
		}
	})
}

// Cluster returns the managed cluster of that name, or nil.
func (e *Env) Cluster(name string) *ManagedCluster {
	for _, c := range e.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// HubConfig is a cluster-admin rest.Config of the hub.
func (e *Env) HubConfig() *rest.Config { return rest.CopyConfig(e.Hub.Config) }

// LogDir holds one log file per process.
func (e *Env) LogDir() string { return e.procs.LogDir }

func (e *Env) progressf(format string, args ...any) {
	fmt.Fprintf(e.progress, "ocmlocal: "+format+"\n", args...)
}

func workDir(opts Options) (string, error) {
	if opts.WorkDir != "" {
		return opts.WorkDir, os.MkdirAll(opts.WorkDir, 0o755)
	}
	// Short paths: unix socket paths of the pod sandboxes must stay under
	// the kernel's 108-byte limit.
	return os.MkdirTemp("", "ocmlocal-")
}

// HubClient returns a controller-runtime client of the hub, as admin, with
// the Kubernetes, OCM and ClusterProfile types registered.
func (e *Env) HubClient() (client.Client, error) { return e.hubClient() }

func (e *Env) hubClient() (client.Client, error) {
	return client.New(e.Hub.Config, client.Options{Scheme: scheme.New()})
}

// RepoRoot is the root of this repository.
func RepoRoot() string { return binaries.RepoRoot() }

// BinariesBuilt tells whether every program Start needs with both addons
// is there, and if not, which is missing and how to build it.
func BinariesBuilt() error {
	return BinariesBuiltFor(Options{ManagedServiceAccount: true, ClusterProxy: true})
}

// BinariesBuiltFor tells whether the programs Start needs for opts are
// there (e.g. bin/ocm/kueue with Kueue).
func BinariesBuiltFor(opts Options) error {
	_, err := binaries.Find(need(opts))
	return err
}

// need says which programs opts need.
func need(opts Options) binaries.Need {
	return binaries.Need{ManagedServiceAccount: opts.ManagedServiceAccount, ClusterProxy: opts.ClusterProxy,
		Kueue: opts.Kueue, OCMVersion: opts.OCMVersion}
}
