// Package capability_test starts capabilities on a real API server where
// some of the APIs they need are not installed yet: they wait, and start
// when the APIs appear; teardowns retry until they succeed.
package capability_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/placementdecision"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

const (
	profileCRD  = "clusterprofiles.multicluster.x-k8s.io"
	msaCRD      = "managedserviceaccounts.authentication.open-cluster-management.io"
	decisionCRD = "placementdecisions.multicluster.x-k8s.io"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{WithoutCRDs: []string{profileCRD, msaCRD, decisionCRD}}, &env))
}

// TestTheManagerWaitsForTheClusterProfileCRD: a hub where the ClusterProfile
// CRD is not installed yet. The manager starts and stays healthy, the mirror
// waits, and publishes as soon as the CRD is installed; no crash loop.
func TestTheManagerWaitsForTheClusterProfileCRD(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.CreateNamespace(ctx, t, c, "wait-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("wait-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("wait-c1").ClusterSet("wait-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("wait-ns", "wait-set").Bound(true).Obj())
	framework.StartManager(t, env, framework.ManagerOptions{})

	NewWithT(t).Expect(env.InstallCRD(profileCRD)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "wait-ns", Name: "wait-c1"}, &cpv1alpha1.ClusterProfile{})).To(Succeed())
	}, 30*time.Second, framework.Interval).Should(Succeed())
}

// TestPlacementDecisionsWaitForTheirCRD: with the placement decisions gate
// on and the PlacementDecision CRD not installed, the capability waits (and
// says so in its metric), and publishes a Placement's slices as soon as the
// CRD is installed.
func TestPlacementDecisionsWaitForTheirCRD(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	g := NewWithT(t)
	if err := c.Get(ctx, client.ObjectKey{Name: profileCRD}, &apiextensionsv1.CustomResourceDefinition{}); apierrors.IsNotFound(err) {
		g.Expect(env.InstallCRD(profileCRD)).To(Succeed())
	}
	framework.CreateNamespace(ctx, t, c, "pdwait-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("pdwait-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("pdwait-c1").ClusterSet("pdwait-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("pdwait-ns", "pdwait-set").Bound(true).Obj())
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "pdwait-ns", Name: "all"}}
	g.Expect(c.Create(ctx, placement)).To(Succeed())
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{string(features.ClusterProfilePlacementDecision): true}})
	g.Eventually(func() (float64, error) {
		value, _, err := framework.MetricValue("clusterprofile_capability_waiting_for_api", map[string]string{"capability": placementdecision.CapabilityName})
		return value, err
	}, framework.Timeout, framework.Interval).Should(Equal(1.0), "the capability says it waits")

	g.Expect(env.InstallCRD(decisionCRD)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "pdwait-ns", Name: "all-decision-1"}, &cpv1alpha1.PlacementDecision{})).To(Succeed())
	}, 30*time.Second, framework.Interval).Should(Succeed(), "the Placement's (empty) slice once the CRD is served")
}

// newManager is a manager on the test API server with only the given gate.
func newManager(t *testing.T, gate featuregate.Feature) (ctrl.Manager, featuregate.FeatureGate) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	gates := features.NewGate()
	if gate != "" {
		if err := gates.SetFromMap(map[string]bool{string(gate): true}); err != nil {
			t.Fatal(err)
		}
	}
	return mgr, gates
}

func start(t *testing.T, mgr ctrl.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// TestACapabilityWaitsForItsAPIAndSharesIndexes: three capabilities on one
// manager need the same index; one needs an API installed later while a
// gate that is on is on, another needs it only while a gate that is off is
// on. Each Setup gets the runner's gates.
func TestACapabilityWaitsForItsAPIAndSharesIndexes(t *testing.T) {
	mgr, gates := newManager(t, features.ClusterProfileCredSyncer)
	var indexRegistrations, setups atomic.Int32
	shared := fieldindex.Index{Name: "shared", Setup: func(context.Context, cache.Cache) error {
		indexRegistrations.Add(1)
		return nil
	}}
	msa := []schema.GroupVersionKind{authv1beta1.GroupVersion.WithKind("ManagedServiceAccount")}
	capabilities := []capability.Capability{
		{Name: "now", Gate: features.ClusterProfileCredSyncer, Indexes: []fieldindex.Index{shared},
			Setup: func(_ context.Context, _ ctrl.Manager, gates capability.Gates) error {
				if gates.Enabled(features.ClusterProfileCredSyncer) && !gates.Enabled(features.ClusterProfileAgent) {
					setups.Add(1)
				}
				return nil
			}},
		{Name: "later", Gate: features.ClusterProfileCredSyncer, Indexes: []fieldindex.Index{shared},
			RequiresIf: map[featuregate.Feature][]schema.GroupVersionKind{features.ClusterProfileCredSyncer: msa},
			Setup:      func(context.Context, ctrl.Manager, capability.Gates) error { setups.Add(10); return nil }},
		{Name: "not needed", Gate: features.ClusterProfileCredSyncer,
			RequiresIf: map[featuregate.Feature][]schema.GroupVersionKind{features.ClusterProfileAgent: msa},
			Setup:      func(context.Context, ctrl.Manager, capability.Gates) error { setups.Add(100); return nil }},
	}
	runner := &capability.Runner{Manager: mgr, Gates: gates, PollInterval: 100 * time.Millisecond}
	NewWithT(t).Expect(runner.Start(context.Background(), capabilities)).To(Succeed())
	NewWithT(t).Expect(setups.Load()).To(Equal(int32(101)), "the capabilities whose APIs are served start at once, with the runner's gates")
	start(t, mgr)
	NewWithT(t).Consistently(setups.Load, time.Second, 100*time.Millisecond).Should(Equal(int32(101)), "the other waits")

	NewWithT(t).Expect(env.InstallCRD(msaCRD)).To(Succeed())
	NewWithT(t).Eventually(setups.Load, 20*time.Second, 100*time.Millisecond).Should(Equal(int32(111)))
	NewWithT(t).Expect(indexRegistrations.Load()).To(Equal(int32(1)), "a shared index is registered once")
}

// TestTeardownsRetryUntilTheySucceed: a teardown runs at start while its
// gate is off and is retried with backoff after failures; an opt-in one runs
// only with cleanup asked for.
func TestTeardownsRetryUntilTheySucceed(t *testing.T) {
	mgr, gates := newManager(t, "")
	var attempts, optInRuns atomic.Int32
	capabilities := []capability.Capability{
		{Name: "flaky", Gate: features.ClusterProfile, Setup: func(context.Context, ctrl.Manager, capability.Gates) error { return nil },
			Teardown: func(context.Context, ctrl.Manager) error {
				if attempts.Add(1) < 3 {
					return errors.New("the API server is busy")
				}
				return nil
			}},
		{Name: "opt-in", Gate: features.ClusterProfileCredSyncer, Setup: func(context.Context, ctrl.Manager, capability.Gates) error { return nil },
			Teardown: func(context.Context, ctrl.Manager) error { optInRuns.Add(1); return nil }, TeardownIsOptIn: true},
	}
	runner := &capability.Runner{Manager: mgr, Gates: gates,
		Backoff: wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Steps: 10, Cap: time.Second}}
	NewWithT(t).Expect(runner.Start(context.Background(), capabilities)).To(Succeed())
	start(t, mgr)

	NewWithT(t).Eventually(attempts.Load, 10*time.Second, 50*time.Millisecond).Should(Equal(int32(3)))
	NewWithT(t).Consistently(attempts.Load, 500*time.Millisecond, 50*time.Millisecond).Should(Equal(int32(3)), "no retry after success")
	NewWithT(t).Expect(optInRuns.Load()).To(BeZero(), "an opt-in teardown needs cleanup asked for")
}
