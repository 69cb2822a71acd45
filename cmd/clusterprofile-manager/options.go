package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/hubmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/memlimit"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

// agentImageRepository is the bundle image's; the chart passes the image it
// deploys.
const agentImageRepository = "ghcr.io/open-cluster-management-io/clusterprofile-bundle"

// agentImageFor is the bundle image of a release version: the image that
// release publishes, or latest for a build that knows no version.
func agentImageFor(release string) string {
	if release == "" || release == version.Unknown {
		return agentImageRepository + ":latest"
	}
	return agentImageRepository + ":" + release
}

// options are the command-line settings: the manager's, plus the client's rate limits.
type options struct {
	manager hubmanager.Options
	qps     float32
	burst   int
	// metricsSecure is the flag; the manager's option is its negation, so
	// that plain HTTP is never anyone's zero value.
	metricsSecure bool
}

func parseOptions(args []string) (*options, *zap.Options, error) {
	gates := features.NewGate()
	o := &options{manager: hubmanager.Options{FeatureGates: gates}}
	m := &o.manager
	fs := pflag.NewFlagSet("clusterprofile-manager", pflag.ContinueOnError)
	gates.AddFlag(fs)
	fs.StringVar(&m.ClusterManagerName, "cluster-manager-name", clusterprofile.DefaultManagerName,
		"Cluster manager name written on every ClusterProfile (spec.clusterManager.name and the x-k8s.io/cluster-manager label).")
	fs.BoolVar(&m.LeaderElect, "leader-elect", false, "Elect a leader so that only one replica writes.")
	fs.StringVar(&m.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease (default: the pod's namespace).")
	addLeaseFlags(fs, &m.LeaderElection)
	fs.StringVar(&m.MetricsAddr, "metrics-bind-address", ":8443", "Address of the Prometheus metrics endpoint; 0 disables it.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS to clients whose bearer token may GET /metrics (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone.")
	fs.StringVar(&m.MetricsCertDir, "metrics-cert-dir", "",
		"Directory holding tls.crt and tls.key for the metrics endpoint (reloaded on change); empty: a self-signed certificate.")
	fs.StringVar(&m.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints; 0 disables them.")
	fs.StringVar(&m.PprofAddr, "pprof-bind-address", "", "Address to serve net/http/pprof on; empty disables it.")
	fs.IntVar(&m.MirrorWorkers, "mirror-workers", 16, "ManagedClusters the mirror reconciles in parallel.")
	fs.BoolVar(&m.CleanupDisabled, "cleanup-disabled-features", false,
		"When a feature gate is off, delete once at start what that feature published (for ClusterProfile: the profiles this mirror wrote).")
	fs.DurationVar(&m.GracefulShutdownTimeout, "graceful-shutdown-timeout", 30*time.Second, "How long in-flight reconciles get to finish on shutdown.")
	fs.StringVar(&m.ProxyEndpoint.Host, "cluster-proxy-user-server-host", "",
		"Host consumers use to reach cluster-proxy's user server (default: cluster-proxy-addon-user.<proxy server namespace>).")
	fs.IntVar(&m.ProxyEndpoint.Port, "cluster-proxy-user-server-port", accessprovider.DefaultUserServerPort,
		"Port of cluster-proxy's user server.")
	fs.StringVar(&m.DirectEntryName, "direct-access-provider-name", accessprovider.DefaultDirectEntryName,
		"Name of the direct access provider entry (feature gate ClusterProfileDirectAccess).")
	m.UnscopedTokens = credsync.UnscopedEverywhere
	fs.Var(&m.UnscopedTokens, "unscoped-tokens", "Where the credential syncer copies the token of a ManagedServiceAccount that "+
		"names no consumer namespaces (annotation "+cpcreds.AnnotationConsumerNamespaces+"): everywhere (every namespace serving its cluster) or nowhere.")
	fs.StringVar(&m.AdmissionPoliciesFile, "admission-policies-file", "",
		"The admission policies and bindings the chart rendered for this release (a YAML stream); the manager checks that they exist as rendered and reports it in clusterprofile_admission_policies_intact. Empty: no check.")
	fs.DurationVar(&m.AdmissionPoliciesCheckPeriod, "admission-policies-check-period", hubmanager.DefaultAdmissionPoliciesCheckPeriod,
		"How often the admission policies are checked.")
	addGatedCapabilityFlags(fs, m)
	addCoexistenceFlags(fs, &m.Coexistence)
	addFactsFlags(fs, &m.Facts)
	fs.Float32Var(&o.qps, "kube-api-qps", 50, "Queries per second allowed towards the hub API server.")
	fs.IntVar(&o.burst, "kube-api-burst", 100, "Burst of queries allowed towards the hub API server.")

	zapOpts := &zap.Options{}
	gofs := goflag.NewFlagSet("", goflag.ContinueOnError)
	zapOpts.BindFlags(gofs)
	// controller-runtime registers --kubeconfig on the standard flag set.
	if kubeconfig := goflag.CommandLine.Lookup("kubeconfig"); kubeconfig != nil {
		gofs.Var(kubeconfig.Value, kubeconfig.Name, kubeconfig.Usage)
	}
	fs.AddGoFlagSet(gofs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	m.InsecureMetrics = !o.metricsSecure
	if err := check(m); err != nil {
		return nil, nil, err
	}
	return o, zapOpts, nil
}

// addFactsFlags binds the write budget of facts: the agent's rule, which
// the manager hands on to it, and the mirror's settle time.
func addFactsFlags(fs *pflag.FlagSet, r *damping.Rule) {
	*r = damping.Default()
	r.Settle = damping.DefaultSettle
	r.AddFlags(fs)
	r.AddSettleFlag(fs)
}

// check refuses settings the flags' types let through.
func check(m *hubmanager.Options) error {
	if m.ClusterManagerName == "" {
		return fmt.Errorf("--cluster-manager-name must not be empty")
	}
	for _, ns := range m.Coexistence.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("--upstream-namespaces: %q is no namespace name: %s", ns, strings.Join(errs, "; "))
		}
	}
	if len(m.Coexistence.Namespaces) == 0 {
		return fmt.Errorf("--upstream-namespaces must name at least one namespace")
	}
	return m.Facts.Validate()
}

// addGatedCapabilityFlags adds the flags of the agent addon and the
// MultiKueue integration.
func addGatedCapabilityFlags(fs *pflag.FlagSet, m *hubmanager.Options) {
	defaultImage := agentImageFor(version.Get().Version)
	m.Agent = addon.DefaultOptions(defaultImage)
	fs.StringVar(&m.Agent.Image, "agent-image", defaultImage,
		"Image the cluster-profile-agent addon runs on managed clusters (feature gate ClusterProfileAgent).")
	fs.DurationVar(&m.Agent.Period, "agent-period", m.Agent.Period, "How often the agent probes its cluster; it writes to the hub at most every 30s, and only on change.")
	fs.DurationVar(&m.Agent.LeaseStaleAfter, "agent-lease-stale-after", m.Agent.LeaseStaleAfter,
		"Age after which a controller-manager or scheduler leader Lease counts as stale.")
	fs.IntVar(&m.Agent.UnhealthyNodeTolerance, "agent-unhealthy-node-tolerance", 0,
		"How many not-Ready or pressured nodes AllNodesHealthy tolerates.")
	fs.StringVar(&m.MultiKueue.Namespace, "multikueue-namespace", multikueue.DefaultNamespace,
		"Kueue's namespace (its Configuration.namespace), whose ClusterProfiles get a MultiKueueCluster each (feature gate ClusterProfileMultiKueue).")
	fs.StringVar(&m.MultiKueue.ConfigName, "multikueue-config", "",
		"Name of a MultiKueueConfig to keep listing those MultiKueueClusters; empty: none (feature gate ClusterProfileMultiKueue).")
	addArgoCDFlags(fs, &m.ArgoCD)
}

// addArgoCDFlags adds the flags of the Argo CD integration.
func addArgoCDFlags(fs *pflag.FlagSet, s *argocd.Settings) {
	fs.StringVar(&s.Namespace, "argocd-namespace", argocd.DefaultNamespace,
		"Argo CD's namespace, whose published ClusterProfiles each get an Argo CD cluster Secret (feature gate ClusterProfileArgoCD).")
	fs.StringVar(&s.ManagedServiceAccount, "argocd-managed-serviceaccount", argocd.DefaultManagedServiceAccount,
		"ManagedServiceAccount whose token cp-creds hands Argo CD on every cluster.")
	fs.StringVar(&s.AccessProvider, "argocd-access-provider", argocd.DefaultAccessProvider,
		"Access provider entry the cluster Secrets reach the clusters through (the cluster-proxy entry, or the direct entry's name).")
	fs.StringVar(&s.Project, "argocd-project", "", "Argo CD project every cluster Secret is scoped to; empty: none.")
	fs.StringVar(&s.CpCredsPath, "argocd-cp-creds-path", argocd.DefaultCpCredsPath, "Where Argo CD's pods run cp-creds from.")
}

// addCoexistenceFlags adds the flags that say which upstream twins a hub
// admin installed.
func addCoexistenceFlags(fs *pflag.FlagSet, trust *coexistence.Trust) {
	fs.StringSliceVar(&trust.Namespaces, "upstream-namespaces", []string{coexistence.DefaultUpstreamNamespace},
		"Namespaces that hub admins install upstream components into (cluster-proxy's and managed-serviceaccount's managers): only a "+
			"manager Deployment there, whose ClusterManagementAddOn exists, makes a capability yield to that component's own ClusterProfile writer.")
	fs.BoolVar(&trust.ReportDecoys, "report-twin-decoys", true,
		"Also watch Deployments named like those managers in every other namespace, to report them as ignored "+
			"(TwinDecoyIgnored Events, clusterprofile_twin_decoys_ignored); they are ignored either way.")
}

func start(ctx context.Context, cfg *rest.Config, opts hubmanager.Options) error {
	limit, err := memlimit.Apply(os.Getenv)
	if err != nil {
		return err
	}
	if limit > 0 {
		ctrl.Log.WithName("setup").Info("Keeping the heap under a soft memory limit from the container's", "bytes", limit)
	}
	mgr, err := hubmanager.New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Starting clusterprofile-manager",
		"clusterManagerName", opts.ClusterManagerName, "mirror", opts.FeatureGates.Enabled(features.ClusterProfile))
	return mgr.Start(ctx)
}

func addLeaseFlags(fs *pflag.FlagSet, le *hubmanager.LeaderElection) {
	*le = hubmanager.DefaultLeaderElection
	fs.DurationVar(&le.LeaseDuration, "leader-elect-lease-duration", le.LeaseDuration,
		"How long after the leader's last renewal a standby takes over (a leader killed without stepping down is replaced within it plus the retry period).")
	fs.DurationVar(&le.RenewDeadline, "leader-elect-renew-deadline", le.RenewDeadline,
		"How long the leader retries renewing before it stops; shorter than the lease duration.")
	fs.DurationVar(&le.RetryPeriod, "leader-elect-retry-period", le.RetryPeriod,
		"How often candidates try to acquire or renew the Lease.")
}
