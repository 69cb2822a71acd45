package credsync

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/cachedobjects"
)

// ExpiringWithin is the horizon of the "expiring soon" count.
const ExpiringWithin = time.Hour

// tokenExpiry reports, at scrape time, what on-call needs to see before
// consumers lose access: how many token copies there are, how long until the
// earliest one expires, and how many expire within the hour (or already
// have). It reads the syncer's cache of copies, so a scrape costs no API
// request. No metric carries a cluster or namespace label.
type tokenExpiry struct {
	copies, earliest, soon, unscoped *prometheus.Desc
	now                              func() time.Time

	mu sync.Mutex
	// cached lists the cached copies; nil before a syncer is set up.
	cached func(context.Context) ([]any, error)
}

func newTokenExpiry(now func() time.Time) *tokenExpiry {
	return &tokenExpiry{
		copies: prometheus.NewDesc(metrics.Name("synced_tokens"),
			"Synced ManagedServiceAccount token copies (Secrets labelled "+LabelSyncedFrom+").", nil, nil),
		earliest: prometheus.NewDesc(metrics.Name("synced_token_earliest_expiry_seconds"),
			"Seconds until the earliest synced token copy expires (negative once expired); absent while no copy carries an expiry.",
			nil, nil),
		soon: prometheus.NewDesc(metrics.Name("synced_tokens_expiring_within_hour"),
			"Synced token copies that expire within the next hour or have expired.", nil, nil),
		unscoped: prometheus.NewDesc(metrics.Name("synced_tokens_unscoped"),
			"Synced token copies of ManagedServiceAccounts that name no consumer namespaces, copied into every namespace serving their cluster.",
			nil, nil),
		now: now,
	}
}

var syncedTokenExpiry = newTokenExpiry(time.Now)

// observeTokenExpiry makes the collector read the copies cache (which holds
// copies only); the last syncer set up in a process wins (tests run
// several, one after another).
func observeTokenExpiry(copies cache.Informers) {
	syncedTokenExpiry.mu.Lock()
	syncedTokenExpiry.cached = cachedobjects.Lister(copies, &corev1.Secret{})
	syncedTokenExpiry.mu.Unlock()
	metrics.RegisterCollector(syncedTokenExpiry)
}

func (c *tokenExpiry) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.copies
	ch <- c.earliest
	ch <- c.soon
	ch <- c.unscoped
}

// Collect emits nothing while the cache cannot answer (not started, or this
// replica is not the leader): an absent series rather than a false zero.
func (c *tokenExpiry) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	cached := c.cached
	c.mu.Unlock()
	if cached == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	copies, err := cached(ctx)
	if err != nil {
		ctrl.Log.WithName("metrics").V(4).Info("Not reporting token expiry", "error", err.Error())
		return
	}
	s := summarizeExpiry(copies, c.now())
	ch <- prometheus.MustNewConstMetric(c.copies, prometheus.GaugeValue, float64(s.copies))
	ch <- prometheus.MustNewConstMetric(c.soon, prometheus.GaugeValue, float64(s.expiringSoon))
	ch <- prometheus.MustNewConstMetric(c.unscoped, prometheus.GaugeValue, float64(s.unscoped))
	if s.earliest != nil {
		ch <- prometheus.MustNewConstMetric(c.earliest, prometheus.GaugeValue, s.earliest.Seconds())
	}
}

// expirySummary is what the collector reports about a set of copies.
type expirySummary struct {
	copies       int
	expiringSoon int
	// unscoped counts the copies marked cpcreds.AnnotationUnscoped.
	unscoped int
	// earliest is the time left on the copy that expires first, nil when no
	// copy carries a readable expiry.
	earliest *time.Duration
}

// summarizeExpiry reads each copy's expiry annotation (RFC 3339); a copy
// without one, or with one that does not parse, counts only as a copy. The
// objects are the cache's own: read, never changed.
func summarizeExpiry(copies []any, now time.Time) expirySummary {
	var s expirySummary
	for _, obj := range copies {
		secret, ok := obj.(*corev1.Secret)
		if !ok {
			continue
		}
		if _, labelled := secret.Labels[LabelSyncedFrom]; !labelled {
			continue
		}
		s.copies++
		if secret.Annotations[cpcreds.AnnotationUnscoped] == "true" {
			s.unscoped++
		}
		value, ok := secret.Annotations[cpcreds.AnnotationTokenExpiration]
		if !ok {
			continue
		}
		expires, err := time.Parse(time.RFC3339, value)
		if err != nil {
			continue
		}
		left := expires.Sub(now)
		if left <= ExpiringWithin {
			s.expiringSoon++
		}
		if s.earliest == nil || left < *s.earliest {
			s.earliest = &left
		}
	}
	return s
}
