//go:build linux

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
)

const (
	releaseName      = "clusterprofile-manager"
	releaseNamespace = "clusterprofile-system"
	// consumerNS is where the shared consumer (MultiKueue) sees the fleet:
	// OCM's "default" ManagedClusterSet is bound there.
	consumerNS = "kueue-system"
	defaultSet = "default"
	msaName    = "multikueue"
	timeout    = 3 * time.Minute
	interval   = 500 * time.Millisecond
)

var (
	env *ocmlocal.Env
	hub client.Client
	// cpCreds is bin/cp-creds, the consumers' exec plugin.
	cpCreds string
	// skipReason is why the suite cannot run here (binaries, root, -short).
	skipReason string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	// The harness uses envtest's CRD installer, which logs through
	// controller-runtime; the processes' own logs are in the work directory.
	ctrllog.SetLogger(logr.Discard())
	if skipReason = whyNot(); skipReason != "" {
		return m.Run()
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var err error
	env, err = ocmlocal.Start(ctx, options())
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local OCM:", err)
		return 1
	}
	defer env.Stop()
	defer env.StopOnSignal()()
	if err := setUp(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "setting up the suite (logs in %s): %v\n", env.LogDir(), err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: OCM and the bundle up in %s\n", time.Since(start).Round(time.Second))
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: process logs in %s (set E2E_KEEP_WORKDIR=1 to keep them)\n", env.LogDir())
	}
	return code
}

// options are the suite's: two clusters, both addons, Kueue on the hub
// (MultiKueue with ClusterProfiles, the consumer of kueue-system), Argo
// CD's namespace with the bundle's Argo CD integration on, and the local
// registry with the bundle's image (bin/image), which the chart installs
// from.
func options() ocmlocal.Options {
	return ocmlocal.Options{Clusters: 2, ManagedServiceAccount: true, ClusterProxy: true, Kueue: true, ArgoCD: true, Registry: true,
		PreviousRelease: registry.PreviousReleaseDir(), KeepWorkDir: os.Getenv("E2E_KEEP_WORKDIR") != ""}
}

// whyNot says why the suite cannot run, or "".
func whyNot() string {
	switch {
	case testing.Short():
		return "end-to-end suite skipped in -short mode"
	case os.Geteuid() != 0:
		return "the local OCM needs root (pod sandboxes use mount and network namespaces)"
	}
	if err := ocmlocal.BinariesBuiltFor(options()); errors.Is(err, ocmlocal.ErrBinariesMissing) {
		return err.Error()
	}
	for _, name := range []string{"clusterprofile-manager", "clusterprofile-agent", "cp-creds"} {
		if _, err := os.Stat(filepath.Join(ocmlocal.RepoRoot(), "bin", name)); err != nil {
			return fmt.Sprintf("bin/%s not built (make build): %v", name, err)
		}
	}
	// In CI a missing image fails the suite (Start reports it) instead.
	if err := registry.BundleImageBuilt(registry.BundleImageLayout()); err != nil && os.Getenv("CI") == "" {
		return fmt.Sprintf("the bundle's image is not built (make image; make test builds it): %v", err)
	}
	if err := registry.PreviousReleaseBuilt(registry.PreviousReleaseDir()); err != nil && os.Getenv("CI") == "" {
		return fmt.Sprintf("the previous release is not built (make previous; make test builds it): %v", err)
	}
	return ""
}

// requireEnv skips the test when the suite cannot run here.
func requireEnv(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// begin starts a test of the suite: it skips unless the local OCM runs,
// and returns the test's context and a Gomega with the suite's waits.
func begin(t *testing.T) (context.Context, *gomega.WithT) {
	t.Helper()
	requireEnv(t)
	return context.Background(), withSuiteWaits(t)
}

// withSuiteWaits is a Gomega for t whose Eventually waits as the suite's
// tests do.
func withSuiteWaits(t *testing.T) *gomega.WithT {
	g := gomega.NewWithT(t)
	g.SetDefaultEventuallyTimeout(timeout)
	g.SetDefaultEventuallyPollingInterval(interval)
	return g
}

// setUp prepares what a platform engineer would for MultiKueue (a node per
// cluster, the multikueue ManagedServiceAccount, synced to profiles, with
// the right to list namespaces on each cluster), installs the previous
// release of the bundle with its chart, binds the default set into
// kueue-system and upgrades the bundle to this release.
func setUp(ctx context.Context) error {
	var err error
	if hub, err = env.HubClient(); err != nil {
		return err
	}
	cpCreds = filepath.Join(ocmlocal.RepoRoot(), "bin", "cp-creds")
	// The clusters have their nodes before the bundle comes, as real ones
	// do: the agent's first report carries them, where a later change would
	// wait out the facts' write budget (minutes).
	for _, c := range env.Clusters {
		if err := prepareCluster(ctx, c); err != nil {
			return err
		}
	}
	return installPreviousThenUpgrade(ctx)
}

func key(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}
