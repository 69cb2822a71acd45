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
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metricsauth"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachedobjects"
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
		FilterProvider: metricsauth.WithAuthenticationAndAuthorization,
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

	mu sync.Mutex
	// cached lists the cached profiles; nil before a manager is built.
	cached      func(context.Context) ([]any, error)
	managerName string
}

var publishedProfiles = &profileCounts{
	profiles: prometheus.NewDesc(metrics.Name("published_profiles"),
		"ClusterProfiles of this cluster manager (label x-k8s.io/cluster-manager), whoever published them, as seen by this replica's cache.",
		nil, nil),
	namespaces: prometheus.NewDesc(metrics.Name("published_namespaces"),
		"Namespaces that hold at least one ClusterProfile of this cluster manager.", nil, nil),
}

// observeProfiles makes the collector read from c; the last manager built in
// a process wins (tests build several, one after another).
func observeProfiles(c cache.Cache, managerName string) {
	publishedProfiles.mu.Lock()
	publishedProfiles.cached = cachedobjects.Lister(c, &cpv1alpha1.ClusterProfile{})
	publishedProfiles.managerName = managerName
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
	cached, managerName := c.cached, c.managerName
	c.mu.Unlock()
	if cached == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	objects, err := cached(ctx)
	if err != nil {
		ctrl.Log.WithName("metrics").V(4).Info("Not counting ClusterProfiles", "error", err.Error())
		return
	}
	profiles, namespaces := countProfiles(objects, managerName)
	ch <- prometheus.MustNewConstMetric(c.profiles, prometheus.GaugeValue, float64(profiles))
	ch <- prometheus.MustNewConstMetric(c.namespaces, prometheus.GaugeValue, float64(namespaces))
}

// countProfiles counts the profiles of managerName and the distinct
// namespaces holding them. The objects are the cache's own: read, never
// changed.
func countProfiles(objects []any, managerName string) (profiles, namespaces int) {
	seen := map[string]struct{}{}
	for _, obj := range objects {
		p, ok := obj.(*cpv1alpha1.ClusterProfile)
		if !ok || p.Labels[cpv1alpha1.LabelClusterManagerKey] != managerName {
			continue
		}
		profiles++
		seen[p.Namespace] = struct{}{}
	}
	return profiles, len(seen)
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
	for _, f := range features.All() {
		value := 0.0
		if gates.Enabled(f) {
			value = 1
		}
		featureEnabled.WithLabelValues(string(f)).Set(value)
	}
}
