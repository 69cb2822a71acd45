// Package metrics declares the Prometheus metrics of clusterprofile-manager.
// They are served by controller-runtime's metrics endpoint, beside its own
// per-controller reconcile and workqueue metrics. No label carries a cluster
// or namespace name, so cardinality stays flat at any fleet size.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

const subsystem = "clusterprofile"

// Kinds of what upstream writers put where the bundle revokes it.
const (
	KindCopy  = "copy"
	KindEntry = "entry"
)

// Write operations counted by ProfileWrites.
const (
	OpCreate   = "create"
	OpMetadata = "metadata"
	OpStatus   = "status"
	OpUpdate   = "update"
	OpDelete   = "delete"
)

var (
	profileWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "writes_total",
		Help:      "ClusterProfile write requests sent, by writer and operation (create, metadata, status, delete).",
	}, []string{"writer", "operation"})

	writeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "write_errors_total",
		Help:      "ClusterProfile write requests that failed, by writer and operation.",
	}, []string{"writer", "operation"})

	skippedClaims = prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "skipped_claims_total",
		Help:      "Cluster claims left out of profile properties because the ClusterProfile schema would reject them (counted when first reported).",
	})

	factsHeld = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "facts_held_total",
		Help:      "Reconciles of a cluster whose changed facts (properties from claims) the write budget held back instead of writing, by change (significant, insignificant).",
	}, []string{"change"})
	nameClashes = prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "name_clashes_total",
		Help:      "Profiles that could not be published because another cluster manager's profile holds the name (counted when first reported).",
	})

	mirrorPassive = prometheus.NewGauge(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "mirror_passive",
		Help:      "1 while the mirror stays passive because OCM's built-in ClusterProfile mirror is enabled.",
	})

	atomicStatusLists = prometheus.NewGauge(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "crd_atomic_status_lists",
		Help:      "1 while the installed ClusterProfile CRD lacks list-map markers and status is written by merge under optimistic locking.",
	})

	syncedSecretWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "synced_secret_writes_total",
		Help:      "Writes of synced ManagedServiceAccount token Secrets, by operation (create, update, delete) and result.",
	}, []string{"operation", "result"})

	syncedSecretCollisions = prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "synced_secret_collisions_total",
		Help:      "Tokens not copied because another Secret holds the name (counted when first reported).",
	})

	yieldingToUpstream = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "yielding_to_upstream",
		Help:      "1 while a capability writes nothing because its upstream twin (cluster-proxy's or managed-serviceaccount's own ClusterProfile writer) is enabled.",
	}, []string{"capability"})

	capabilityWaiting = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "capability_waiting_for_api",
		Help:      "1 while a capability whose gate is on waits for an API it requires to be served (say, an addon not yet installed).",
	}, []string{"capability"})

	// Vectors without labels have no series until the first check, so a
	// manager that checks nothing (no expected-policies file) reports
	// nothing rather than a false "not intact".
	admissionPoliciesIntact = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "admission_policies_intact",
		Help:      "1 while every admission policy and binding the chart rendered for this release exists as rendered, 0 while one is missing, altered or unreadable (checked every minute).",
	}, nil)

	twinDecoysIgnored = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "twin_decoys_ignored",
		Help:      "Deployments named like an upstream twin's manager that would turn its ClusterProfile writer on but that no hub admin installed, ignored, by capability and reason (namespace: outside the upstream namespaces; addon: its ClusterManagementAddOn does not exist).",
	}, []string{"capability", "reason"})
	upstreamWritesRevoked = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem,
		Name:      "upstream_writes_revoked_total",
		Help:      "Token copies and access entries that another writer (such as an upstream twin) put where this bundle's rules allow none, and that the manager removed, by kind (copy, entry); a steady rise means that writer keeps putting them back.",
	}, []string{"kind"})
	placementClustersLeftOut = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "placement_clusters_left_out",
		Help:      "Clusters an OCM Placement chose that its Cluster Inventory PlacementDecisions leave out, summed over Placements, by reason (unpublished: the Placement's namespace does not publish the cluster; no-profile: it does, but the profile is not there yet).",
	}, []string{"reason"})
	admissionPolicyProblems = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem,
		Name:      "admission_policy_problems",
		Help:      "The chart's admission policies and bindings found missing, altered or unreadable at the last check (1 as well when the expected ones cannot be read).",
	}, nil)

	registerOnce sync.Once
)

// Register adds the metrics to controller-runtime's registry; safe to call more than once.
func Register() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(profileWrites, writeErrors, skippedClaims, factsHeld, nameClashes, mirrorPassive, atomicStatusLists,
			syncedSecretWrites, syncedSecretCollisions, capabilityWaiting, admissionPoliciesIntact, admissionPolicyProblems,
			yieldingToUpstream, twinDecoysIgnored, upstreamWritesRevoked, placementClustersLeftOut)
	})
}

// ProfileWrite counts one write request and its outcome. The error series
// of a writer and operation exists (at 0) from its first write on, so that
// rate() and increase() see the first failure too.
func ProfileWrite(writer, operation string, err error) {
	profileWrites.WithLabelValues(writer, operation).Inc()
	errors := writeErrors.WithLabelValues(writer, operation)
	if err != nil {
		errors.Inc()
	}
}

// FactsHeld counts one reconcile whose changed facts the write budget held
// back; change is damping.Change's name, lowercased.
func FactsHeld(change string) { factsHeld.WithLabelValues(change).Inc() }

// Name is the full name of one of this project's metrics: the subsystem
// prefix and name.
func Name(name string) string { return prometheus.BuildFQName("", subsystem, name) }

var collectors sync.Map

// RegisterCollector adds a collector that computes its metrics at scrape
// time (from an informer cache) to controller-runtime's registry, once per
// collector: safe to call each time a manager is built.
func RegisterCollector(c prometheus.Collector) {
	if _, loaded := collectors.LoadOrStore(c, struct{}{}); !loaded {
		metrics.Registry.MustRegister(c)
	}
}

// SyncedSecretWrite counts one write of a synced token Secret; both results
// series exist from an operation's first write on.
func SyncedSecretWrite(operation string, err error) {
	ok, failed := syncedSecretWrites.WithLabelValues(operation, "ok"), syncedSecretWrites.WithLabelValues(operation, "error")
	if err != nil {
		failed.Inc()
		return
	}
	ok.Inc()
}

// SyncedSecretCollision counts a newly reported name collision.
func SyncedSecretCollision() { syncedSecretCollisions.Inc() }

// ClaimsSkipped counts newly reported skipped claims.
func ClaimsSkipped(n int) { skippedClaims.Add(float64(n)) }

// NameClash counts a newly reported name clash.
func NameClash() { nameClashes.Inc() }

// SetMirrorPassive records whether the mirror is passive.
func SetMirrorPassive(passive bool) { mirrorPassive.Set(boolToFloat(passive)) }

// SetYieldingToUpstream records whether a capability yields to its upstream twin.
func SetYieldingToUpstream(capability string, yielding bool) {
	yieldingToUpstream.WithLabelValues(capability).Set(boolToFloat(yielding))
}

// SetTwinDecoysIgnored records how many Deployments named like a
// capability's twin are ignored, for one reason.
func SetTwinDecoysIgnored(capability, reason string, n int) {
	twinDecoysIgnored.WithLabelValues(capability, reason).Set(float64(n))
}

// UpstreamWriteRevoked counts one copy or entry (kind) another writer put
// where the bundle's rules allow none, removed.
func UpstreamWriteRevoked(kind string) { upstreamWritesRevoked.WithLabelValues(kind).Inc() }

// SetPlacementClustersLeftOut records how many chosen clusters the
// PlacementDecision slices leave out, over every Placement, for one reason.
func SetPlacementClustersLeftOut(reason string, n int) {
	placementClustersLeftOut.WithLabelValues(reason).Set(float64(n))
}

// SetCapabilityWaiting records whether a capability waits for an API.
func SetCapabilityWaiting(capability string, waiting bool) {
	capabilityWaiting.WithLabelValues(capability).Set(boolToFloat(waiting))
}

// SetAdmissionPolicyProblems records the outcome of a check of the chart's
// admission policies: how many are missing, altered or unreadable.
func SetAdmissionPolicyProblems(problems int) {
	admissionPoliciesIntact.WithLabelValues().Set(boolToFloat(problems == 0))
	admissionPolicyProblems.WithLabelValues().Set(float64(problems))
}

// SetAtomicStatusLists records whether the CRD forces merged status writes.
func SetAtomicStatusLists(atomic bool) { atomicStatusLists.Set(boolToFloat(atomic)) }

func boolToFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
