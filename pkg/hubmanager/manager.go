// Package hubmanager assembles clusterprofile-manager: the scheme, the
// controller-runtime manager with its caches, and every capability that its
// feature gates turn on. cmd/clusterprofile-manager only parses flags; tests,
// the benchmark and the demo build the very same manager through New.
package hubmanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	admissionregistrationv1 "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/installcheck"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/pkg/placementdecision"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// Options configure the manager; cmd/clusterprofile-manager maps its flags here.
type Options struct {
	FeatureGates       featuregate.FeatureGate
	ClusterManagerName string
	LeaderElect        bool
	// LeaderElectionNamespace holds the leader Lease and the mirror's
	// cluster id records (default: the pod's namespace).
	LeaderElectionNamespace string
	// LeaderElection holds the Lease timings (zero: DefaultLeaderElection).
	LeaderElection LeaderElection
	MetricsAddr    string
	ProbeAddr      string
	// PprofAddr serves net/http/pprof when set (for profiling at scale).
	PprofAddr     string
	MirrorWorkers int
	// CleanupDisabled deletes, once at start, what a disabled feature published.
	CleanupDisabled         bool
	GracefulShutdownTimeout time.Duration
	// ProxyEndpoint is where consumers reach cluster-proxy's user server.
	ProxyEndpoint accessprovider.Endpoint
	// DirectEntryName names the direct access provider entry.
	DirectEntryName string
	// UnscopedTokens is where the syncer copies the tokens of
	// ManagedServiceAccounts that name no consumer namespaces.
	UnscopedTokens credsync.UnscopedTokens
	// Agent configures the cluster-profile-agent addon (gate ClusterProfileAgent).
	Agent addon.Options
	// Facts is the write budget of drifting facts: the mirror's properties
	// made of claims, and the agent's claims (Agent.Facts is set from it).
	Facts damping.Rule
	// Coexistence says which upstream twins a hub admin installed: only
	// those make a capability yield.
	Coexistence coexistence.Trust
	// ArgoCD configures the Argo CD integration (gate ClusterProfileArgoCD);
	// its ManagerName is set from ClusterManagerName.
	ArgoCD argocd.Settings
	// MultiKueue configures the MultiKueue integration (gate
	// ClusterProfileMultiKueue); its ManagerName is set from ClusterManagerName.
	MultiKueue multikueue.Options
	// Controller holds controller-runtime's controller defaults.
	Controller config.Controller
	// InsecureMetrics serves metrics over plain HTTP with no authentication;
	// by default they are served over HTTPS to authorized clients only.
	InsecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics endpoint;
	// without them it uses a self-signed certificate.
	MetricsCertDir string
	// AdmissionPoliciesFile holds the admission policies and bindings the
	// chart rendered for the release; when set, the manager checks every
	// AdmissionPoliciesCheckPeriod (zero: DefaultAdmissionPoliciesCheckPeriod)
	// that they exist as rendered and reports it in its metrics.
	AdmissionPoliciesFile        string
	AdmissionPoliciesCheckPeriod time.Duration
}

// LeaderElection are the timings of the leader's Lease.
type LeaderElection struct {
	// LeaseDuration is how long a standby waits, after the leader's last
	// renewal, before it takes over: a leader that dies without stepping
	// down (SIGKILL, a lost node) is replaced within it plus RetryPeriod.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps retrying a renewal before
	// it stops writing (it exits, and a standby takes over).
	RenewDeadline time.Duration
	// RetryPeriod is how often candidates try to acquire or renew.
	RetryPeriod time.Duration
}

// DefaultLeaderElection takes over from a dead leader within 12 s (10 s +
// 2 s), under the 15 s a fleet's consumers are promised; controller-runtime's
// defaults (15 s + 2 s) would not.
var DefaultLeaderElection = LeaderElection{LeaseDuration: 10 * time.Second, RenewDeadline: 7 * time.Second, RetryPeriod: 2 * time.Second}

// New builds the manager with every enabled capability set up; Start runs it.
func New(ctx context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	if opts.FeatureGates == nil {
		opts.FeatureGates = features.NewGate()
	}
	if opts.ClusterManagerName == "" {
		opts.ClusterManagerName = clusterprofile.DefaultManagerName
	}
	if opts.LeaderElection == (LeaderElection{}) {
		opts.LeaderElection = DefaultLeaderElection
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        "clusterprofile-manager.open-cluster-management.io",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// Step down at once on shutdown so a standby replica takes over quickly.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.LeaderElection.LeaseDuration,
		RenewDeadline:                 &opts.LeaderElection.RenewDeadline,
		RetryPeriod:                   &opts.LeaderElection.RetryPeriod,
		GracefulShutdownTimeout:       &opts.GracefulShutdownTimeout,
		Cache:                         cacheOptions(),
		Controller:                    controllerOptions(opts.Controller),
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	metrics.Register()
	observeProfiles(mgr.GetCache(), opts.ClusterManagerName)
	observeFeatureGates(opts.FeatureGates)
	if err := errors.Join(mgr.AddHealthzCheck("healthz", healthz.Ping), mgr.AddReadyzCheck("readyz", healthz.Ping)); err != nil {
		return nil, err
	}
	if err := addAdmissionPolicyCheck(mgr, cfg, opts); err != nil {
		return nil, err
	}
	runner := &capability.Runner{Manager: mgr, Gates: opts.FeatureGates, Cleanup: opts.CleanupDisabled}
	if err := runner.Start(ctx, Capabilities(opts)); err != nil {
		return nil, err
	}
	return mgr, nil
}

// addAdmissionPolicyCheck adds the periodic check of the release's admission
// policies when the chart's expected-policies file is given.
func addAdmissionPolicyCheck(mgr ctrl.Manager, cfg *rest.Config, opts Options) error {
	if opts.AdmissionPoliciesFile == "" {
		return nil
	}
	client, err := admissionregistrationv1.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the admission policy client: %w", err)
	}
	period := opts.AdmissionPoliciesCheckPeriod
	if period <= 0 {
		period = DefaultAdmissionPoliciesCheckPeriod
	}
	return mgr.Add(&admissionPolicyCheck{file: opts.AdmissionPoliciesFile, period: period,
		get: installcheck.RESTGetter(client.RESTClient())})
}

// controllerOptions turns controller-runtime's priority queue off unless
// asked for: in v0.23.3 it can deadlock on shutdown (controller-runtime issue
// 3538, fixed after that release): a worker that stops waiting for an item
// leaves the queue's hand-over blocked with its lock held, so the other
// workers never finish and SIGTERM ends in "failed waiting for all runnables"
// instead of a clean exit. Seen in TestSIGTERMDuringConvergence under load.
func controllerOptions(c config.Controller) config.Controller {
	if c.UsePriorityQueue == nil {
		c.UsePriorityQueue = ptr.To(false)
	}
	return c
}

// AgentOptions are the agent's settings, under the manager's write budget.
func AgentOptions(opts Options) addon.Options {
	agent := opts.Agent
	agent.Facts = opts.Facts
	// The agent decides on a whole report at once: nothing of it arrives
	// in pieces to settle.
	agent.Facts.Settle = 0
	return agent
}

// Capabilities is what the manager can do, each behind its gate: set up
// when the gate is on (once its APIs are served), torn down when it is off.
func Capabilities(opts Options) []capability.Capability {
	// The access providers leave their entries to go with the profiles this
	// mirror deletes, and only those.
	deletions := mirror.NewDeletions()
	access := accessProviderOptions(opts)
	access.MirrorDeletions = deletions
	// The proxy source yields to cluster-proxy's own writer of its entry,
	// and the syncer to managed-serviceaccount's own syncer.
	access.ProxyTwin = coexistence.NewTwinWatch(coexistence.ClusterProxyWriter, opts.Coexistence)
	return []capability.Capability{
		mirror.Capability(mirror.Options{
			ManagerName: opts.ClusterManagerName,
			Workers:     opts.MirrorWorkers,
			Deletions:   deletions,
			Facts:       opts.Facts,
			Namespace:   ownNamespace(opts),
		}),
		accessprovider.ProxyCapability(access),
		accessprovider.DirectCapability(access),
		credsync.Capability(credSyncerOptions(opts, access)),
		addon.Capability(AgentOptions(opts)),
		multikueue.Capability(multikueue.Options{ManagerName: opts.ClusterManagerName,
			Namespace: opts.MultiKueue.Namespace, ConfigName: opts.MultiKueue.ConfigName}),
		argocd.Capability(argoCDOptions(opts, access)),
		placementdecision.Capability(placementdecision.Options{ManagerName: opts.ClusterManagerName, Workers: opts.MirrorWorkers}),
	}
}

// serviceAccountNamespaceFile names the pod's namespace in a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is the manager's own namespace, where its leader Lease and
// the mirror's id records live: the leader election namespace (the chart's
// release namespace), else the pod's, else none (the mirror's default).
func ownNamespace(opts Options) string {
	if opts.LeaderElectionNamespace != "" {
		return opts.LeaderElectionNamespace
	}
	if data, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		return strings.TrimSpace(string(data))
	}
	return ""
}

// credSyncerOptions has the syncer record, on every copy, the servers of
// the entries the enabled access providers (access) publish.
func credSyncerOptions(opts Options, access accessprovider.Options) credsync.Options {
	return credsync.Options{ManagerName: opts.ClusterManagerName, Workers: opts.MirrorWorkers, Unscoped: opts.UnscopedTokens,
		Upstream:          coexistence.NewTwinWatch(coexistence.ManagedServiceAccountSyncer, opts.Coexistence),
		PublishedRequires: publishedEntriesRequire,
		Published: func(mgr ctrl.Manager, gates capability.Gates) (credsync.Published, error) {
			return publishedEntries(mgr, gates, access)
		},
	}
}

// argoCDOptions has the Argo CD integration reach the clusters through the
// entries the enabled access providers (access) publish.
func argoCDOptions(opts Options, access accessprovider.Options) argocd.Options {
	settings := opts.ArgoCD
	settings.ManagerName = opts.ClusterManagerName
	return argocd.Options{Settings: settings, EntriesRequire: publishedEntriesRequire,
		Entries: func(mgr ctrl.Manager, gates capability.Gates) (argocd.Entries, error) {
			return publishedEntries(mgr, gates, access)
		}}
}

// publishedEntriesRequire are the APIs publishedEntries reads, by the gate
// that makes it read them.
var publishedEntriesRequire = map[featuregate.Feature][]schema.GroupVersionKind{
	features.ClusterProfileAccessProvider: accessprovider.ProxyRequires,
}

// publishedEntries builds, on a manager, the entries the access providers
// that gates turn on publish, with the very functions that write them.
func publishedEntries(mgr ctrl.Manager, gates capability.Gates, access accessprovider.Options) (accessprovider.Published, error) {
	var published accessprovider.Published
	if gates.Enabled(features.ClusterProfileAccessProvider) {
		source, err := accessprovider.NewProxy(mgr, access)
		if err != nil {
			return nil, err
		}
		published = append(published, source)
	}
	if gates.Enabled(features.ClusterProfileDirectAccess) {
		published = append(published, accessprovider.NewDirect(mgr, access))
	}
	return published, nil
}

func accessProviderOptions(opts Options) accessprovider.Options {
	return accessprovider.Options{ManagerName: opts.ClusterManagerName, Endpoint: opts.ProxyEndpoint,
		DirectEntryName: opts.DirectEntryName, Workers: opts.MirrorWorkers}
}
