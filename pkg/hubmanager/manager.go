// Package hubmanager assembles clusterprofile-manager: the scheme, the
// controller-runtime manager with its caches, and every capability that its
// feature gates turn on. cmd/clusterprofile-manager only parses flags; tests,
// the benchmark and the demo build the very same manager through New.
package hubmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// Options configure the manager; cmd/clusterprofile-manager maps its flags here.
type Options struct {
	FeatureGates            featuregate.FeatureGate
	ClusterManagerName      string
	LeaderElect             bool
	LeaderElectionNamespace string
	MetricsAddr             string
	ProbeAddr               string
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
	// Agent configures the cluster-profile-agent addon (gate ClusterProfileAgent).
	Agent addon.Options
	// Controller holds controller-runtime's controller defaults.
	Controller config.Controller
	// InsecureMetrics serves metrics over plain HTTP with no authentication;
	// by default they are served over HTTPS to authorized clients only.
	InsecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics endpoint;
	// without them it uses a self-signed certificate.
	MetricsCertDir string
}

// New builds the manager with every enabled capability set up; Start runs it.
func New(ctx context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	if opts.FeatureGates == nil {
		opts.FeatureGates = features.NewGate()
	}
	if opts.ClusterManagerName == "" {
		opts.ClusterManagerName = clusterprofile.DefaultManagerName
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
		GracefulShutdownTimeout:       &opts.GracefulShutdownTimeout,
		Cache:                         cacheOptions(),
		Controller:                    opts.Controller,
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
	if err := served(mgr.GetRESTMapper(), cpv1alpha1.GroupVersion.WithKind("ClusterProfile")); err != nil {
		return nil, fmt.Errorf("the ClusterProfile CRD (%s) must be installed: %w", clusterprofile.CRDName, err)
	}
	if err := clusterprofile.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("setting up ClusterProfile indexes: %w", err)
	}
	if readsMembership(opts.FeatureGates) {
		// An index starts its informer, which needs the membership RBAC
		// that only these capabilities' roles grant.
		if err := membership.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return nil, fmt.Errorf("setting up membership indexes: %w", err)
		}
	}
	if err := setupMirror(ctx, mgr, opts); err != nil {
		return nil, err
	}
	if err := setupAccessProviders(ctx, mgr, opts); err != nil {
		return nil, err
	}
	if err := setupCredSync(ctx, mgr, opts); err != nil {
		return nil, err
	}
	if err := setupAgent(mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// readsMembership tells whether an enabled capability acts in namespaces on
// clusters' behalf, and so decides membership (pkg/membership).
func readsMembership(gates featuregate.FeatureGate) bool {
	for _, f := range []featuregate.Feature{features.ClusterProfile, features.ClusterProfileAccessProvider,
		features.ClusterProfileDirectAccess, features.ClusterProfileCredSyncer} {
		if gates.Enabled(f) {
			return true
		}
	}
	return false
}

// cacheOptions keep the informer caches small: managedFields are dropped
// except this project's own entries on ClusterProfiles (the no-op check reads
// them), and only the ClusterProfile CRD is watched among CRDs.
func cacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&cpv1alpha1.ClusterProfile{}: {Transform: clusterprofile.KeepOwnManagedFields()},
			&apiextensionsv1.CustomResourceDefinition{}: {
				Field: fields.OneTermEqualSelector("metadata.name", clusterprofile.CRDName),
			},
		},
	}
}

func setupMirror(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	log := ctrl.Log.WithName("setup")
	guard := &coexistence.Guard{Recorder: mgr.GetEventRecorder("clusterprofile-coexistence")}
	if served(mgr.GetRESTMapper(), schema.GroupVersionKind{
		Group: operatorv1.GroupVersion.Group, Version: operatorv1.GroupVersion.Version, Kind: "ClusterManager"}) == nil {
		guard.Reader = mgr.GetClient()
	} else {
		log.Info("ClusterManager API not served; not checking for OCM's built-in ClusterProfile mirror")
	}
	if !opts.FeatureGates.Enabled(features.ClusterProfile) {
		log.Info("Feature gate ClusterProfile is off; not mirroring ManagedClusters")
		if opts.CleanupDisabled {
			return mgr.Add(cleanupRunnable(mgr, guard, opts.ClusterManagerName))
		}
		return nil
	}
	return mirror.Setup(ctx, mgr, mirror.Options{
		ManagerName:  opts.ClusterManagerName,
		Workers:      opts.MirrorWorkers,
		Guard:        guard,
		AgentReports: opts.FeatureGates.Enabled(features.ClusterProfileAgent),
	})
}

// setupAccessProviders runs the enabled access providers and withdraws the
// entries of disabled ones. They act on the profiles of the cluster manager
// whoever publishes them (this mirror or OCM's built-in one).
func setupAccessProviders(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	proxy := opts.FeatureGates.Enabled(features.ClusterProfileAccessProvider)
	if proxy {
		if err := served(mgr.GetRESTMapper(), schema.GroupVersionKind{Group: "proxy.open-cluster-management.io",
			Version: "v1alpha1", Kind: "ManagedProxyConfiguration"}); err != nil {
			ctrl.Log.WithName("setup").Info("ManagedProxyConfiguration API not served: is cluster-proxy installed? "+
				"Profiles get no cluster-proxy entry until it is and the manager restarts", "error", err.Error())
			proxy = false
		}
	}
	return accessprovider.Setup(ctx, mgr, accessprovider.Options{
		ManagerName:     opts.ClusterManagerName,
		Proxy:           proxy,
		Direct:          opts.FeatureGates.Enabled(features.ClusterProfileDirectAccess),
		Endpoint:        opts.ProxyEndpoint,
		DirectEntryName: opts.DirectEntryName,
		Workers:         opts.MirrorWorkers,
	})
}

// setupCredSync runs the credential syncer or, with its gate off and
// CleanupDisabled, deletes the copies it made (which needs the right to list
// every Secret: opt-in, like the mirror's cleanup).
func setupCredSync(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if !opts.FeatureGates.Enabled(features.ClusterProfileCredSyncer) {
		if opts.CleanupDisabled {
			return mgr.Add(credsync.Withdrawal(mgr))
		}
		return nil
	}
	if err := served(mgr.GetRESTMapper(), schema.GroupVersionKind{Group: "authentication.open-cluster-management.io",
		Version: "v1beta1", Kind: "ManagedServiceAccount"}); err != nil {
		ctrl.Log.WithName("setup").Info("ManagedServiceAccount API not served: is the managed-serviceaccount addon installed? "+
			"No tokens are synced until it is and the manager restarts", "error", err.Error())
		return nil
	}
	return credsync.Setup(ctx, mgr, credsync.Options{ManagerName: opts.ClusterManagerName, Workers: opts.MirrorWorkers})
}

// setupAgent registers the cluster-profile-agent addon; the mirror folds its
// reports in (see setupMirror).
func setupAgent(mgr ctrl.Manager, opts Options) error {
	if !opts.FeatureGates.Enabled(features.ClusterProfileAgent) {
		return nil
	}
	if err := served(mgr.GetRESTMapper(), schema.GroupVersionKind{Group: "addon.open-cluster-management.io",
		Version: "v1beta1", Kind: "ManagedClusterAddOn"}); err != nil {
		return fmt.Errorf("feature gate ClusterProfileAgent needs OCM's addon API (addon.open-cluster-management.io/v1beta1): %w", err)
	}
	return addon.Setup(mgr, opts.Agent)
}

// cleanupRunnable deletes the mirror's profiles once, as the leader, unless
// OCM's built-in mirror is on (its profiles share the manager name).
func cleanupRunnable(mgr ctrl.Manager, guard *coexistence.Guard, managerName string) manager.RunnableFunc {
	return func(ctx context.Context) error {
		log := ctrl.Log.WithName("cleanup")
		if passive, err := guard.Passive(ctx); err != nil || passive {
			log.Info("Not cleaning up ClusterProfiles while OCM's built-in mirror is enabled or unknown", "error", err)
			return nil
		}
		deleted, err := mirror.Cleanup(ctx, mgr.GetAPIReader(), mgr.GetClient(), managerName)
		if err != nil {
			log.Error(err, "Cleaning up ClusterProfiles", "deleted", deleted)
			return nil
		}
		log.Info("Deleted the ClusterProfiles this mirror had published", "deleted", deleted)
		return nil
	}
}

func served(mapper meta.RESTMapper, gvk schema.GroupVersionKind) error {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err
}
