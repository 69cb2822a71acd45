package hubmanager

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/featuregate"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// metricsOptions serve /metrics over HTTPS behind authentication (TokenReview)
// and authorization (SubjectAccessReview of GET on the non-resource URL
// /metrics) unless opts.InsecureMetrics asks for plain HTTP. Without a
// certificate in MetricsCertDir the server uses a self-signed one. HTTP/2 is
// off: the endpoint gains nothing from it and it widens the attack surface
// (HTTP/2 Rapid Reset).
func metricsOptions(opts Options) metricsserver.Options {
	if opts.InsecureMetrics {
		return metricsserver.Options{BindAddress: opts.MetricsAddr}
	}
	return metricsserver.Options{
		BindAddress:    opts.MetricsAddr,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
		CertDir:        opts.MetricsCertDir,
		TLSOpts:        []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
}

// profileCounts describes, at scrape time, the ClusterProfiles of the
// cluster manager: how many there are and in how many namespaces. It reads
// the manager's informer cache, so a scrape costs no API request. No metric
// carries a namespace or cluster label.
type profileCounts struct {
	profiles, namespaces *prometheus.Desc

	mu          sync.Mutex
	reader      client.Reader
	managerName string
}

var publishedProfiles = &profileCounts{
	profiles: prometheus.NewDesc(metrics.Name("published_profiles"),
		"ClusterProfiles of this cluster manager (label x-k8s.io/cluster-manager), whoever published them, as seen by this replica's cache.",
		nil, nil),
	namespaces: prometheus.NewDesc(metrics.Name("published_namespaces"),
		"Namespaces that hold at least one ClusterProfile of this cluster manager.", nil, nil),
}

// observeProfiles makes the collector read from reader; the last manager
// built in a process wins (tests build several, one after another).
func observeProfiles(reader client.Reader, managerName string) {
	publishedProfiles.mu.Lock()
	publishedProfiles.reader, publishedProfiles.managerName = reader, managerName
	publishedProfiles.mu.Unlock()
	metrics.RegisterCollector(publishedProfiles)
}

func (c *profileCounts) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.profiles
	ch <- c.namespaces
}

// Collect emits nothing while the cache cannot answer (not started yet):
// an absent series, not a false zero.
func (c *profileCounts) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader, managerName := c.reader, c.managerName
	c.mu.Unlock()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &cpv1alpha1.ClusterProfileList{}
	if err := reader.List(ctx, list, client.MatchingLabels{cpv1alpha1.LabelClusterManagerKey: managerName},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.Log.WithName("metrics").V(4).Info("Not counting ClusterProfiles", "error", err.Error())
		return
	}
	profiles, namespaces := countProfiles(list.Items)
	ch <- prometheus.MustNewConstMetric(c.profiles, prometheus.GaugeValue, float64(profiles))
	ch <- prometheus.MustNewConstMetric(c.namespaces, prometheus.GaugeValue, float64(namespaces))
}

// countProfiles counts profiles and the distinct namespaces holding them.
func countProfiles(items []cpv1alpha1.ClusterProfile) (profiles, namespaces int) {
	seen := map[string]struct{}{}
	for i := range items {
		seen[items[i].Namespace] = struct{}{}
	}
	return len(items), len(seen)
}

// featureEnabled says which capabilities run, so that alerts and dashboards
// can tell "off" from "broken" (the mirror passive while its gate is on).
var featureEnabled = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: metrics.Name("feature_enabled"),
	Help: "1 for each of the manager's feature gates that is on, 0 for each that is off.",
}, []string{"feature"})

// observeFeatureGates records every gate of the project, on or off.
func observeFeatureGates(gates featuregate.FeatureGate) {
	metrics.RegisterCollector(featureEnabled)
	for _, f := range []featuregate.Feature{features.ClusterProfile, features.ClusterProfileAccessProvider,
		features.ClusterProfileDirectAccess, features.ClusterProfileCredSyncer, features.ClusterProfileAgent} {
		value := 0.0
		if gates.Enabled(f) {
			value = 1
		}
		featureEnabled.WithLabelValues(string(f)).Set(value)
	}
}
