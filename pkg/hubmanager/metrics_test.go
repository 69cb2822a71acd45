package hubmanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// TestProfileCountsCollector: profiles of this cluster manager only, and the
// namespaces holding them, without a namespace label.
func TestProfileCountsCollector(t *testing.T) {
	store := []any{
		utiltesting.MakeClusterProfile("team-a", "c1", "open-cluster-management").Obj(),
		utiltesting.MakeClusterProfile("team-a", "c2", "open-cluster-management").Obj(),
		utiltesting.MakeClusterProfile("team-b", "c1", "open-cluster-management").Obj(),
		utiltesting.MakeClusterProfile("team-c", "c1", "someone-else").Obj(),
	}
	c := &profileCounts{profiles: publishedProfiles.profiles, namespaces: publishedProfiles.namespaces,
		cached: func(context.Context) ([]any, error) { return store, nil }, managerName: "open-cluster-management"}
	want := `
# HELP clusterprofile_published_namespaces Namespaces that hold at least one ClusterProfile of this cluster manager.
# TYPE clusterprofile_published_namespaces gauge
clusterprofile_published_namespaces 2
# HELP clusterprofile_published_profiles ClusterProfiles of this cluster manager (label x-k8s.io/cluster-manager), whoever published them, as seen by this replica's cache.
# TYPE clusterprofile_published_profiles gauge
clusterprofile_published_profiles 3
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestProfileCountsWithoutACacheReportNothing(t *testing.T) {
	c := &profileCounts{profiles: publishedProfiles.profiles, namespaces: publishedProfiles.namespaces}
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("collected %d metrics before a manager was built, want 0", n)
	}
	c.cached = func(context.Context) ([]any, error) { return nil, errors.New("not synced") }
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("collected %d metrics from a cache that cannot answer, want 0", n)
	}
}

func TestMetricsOptions(t *testing.T) {
	secure := metricsOptions(Options{MetricsAddr: ":8443", MetricsCertDir: "/certs"})
	if !secure.SecureServing || secure.FilterProvider == nil || secure.CertDir != "/certs" || secure.BindAddress != ":8443" {
		t.Errorf("default metrics options are not secure: %+v", secure)
	}
	plain := metricsOptions(Options{MetricsAddr: ":8080", InsecureMetrics: true})
	if plain.SecureServing || plain.FilterProvider != nil || plain.BindAddress != ":8080" {
		t.Errorf("InsecureMetrics options: %+v", plain)
	}
}

func TestFeatureGatesAreReported(t *testing.T) {
	gates := features.NewGate()
	if err := gates.Set("ClusterProfile=true,ClusterProfileCredSyncer=true"); err != nil {
		t.Fatal(err)
	}
	observeFeatureGates(gates)
	want := `
# HELP clusterprofile_feature_enabled 1 for each of the manager's feature gates that is on, 0 for each that is off.
# TYPE clusterprofile_feature_enabled gauge
clusterprofile_feature_enabled{feature="ClusterProfile"} 1
clusterprofile_feature_enabled{feature="ClusterProfileAccessProvider"} 0
clusterprofile_feature_enabled{feature="ClusterProfileAgent"} 0
clusterprofile_feature_enabled{feature="ClusterProfileArgoCD"} 0
clusterprofile_feature_enabled{feature="ClusterProfileCredSyncer"} 1
clusterprofile_feature_enabled{feature="ClusterProfileDirectAccess"} 0
clusterprofile_feature_enabled{feature="ClusterProfileMultiKueue"} 0
clusterprofile_feature_enabled{feature="ClusterProfilePlacementDecision"} 0
`
	if err := testutil.CollectAndCompare(featureEnabled, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
