package agent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"open-cluster-management.io/addon-framework/pkg/lease"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// GracefulShutdownTimeout is how long the probe loop and the addon lease
// updater get to return once the manager stops. Both end their requests with
// their context, so this is ample, and it stays inside a Pod's default 30 s
// termination grace period: a runnable that hangs makes the agent exit with
// an error the log shows, instead of being killed without a word.
const GracefulShutdownTimeout = 10 * time.Second

// ManagerOptions are the settings of the controller-runtime manager the agent
// runs on, which talks to the managed cluster. probeAddr serves /healthz and
// /readyz; empty or "0" serves nothing.
func ManagerOptions(probeAddr string) ctrl.Options {
	return ctrl.Options{
		// One agent per managed cluster, one replica: nothing to elect.
		LeaderElection: false,
		// The agent has no metrics of its own; serving controller-runtime's
		// would open a port on every managed cluster for nothing.
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  probeAddr,
		GracefulShutdownTimeout: ptr.To(GracefulShutdownTimeout),
		// The classic queue: controller-runtime v0.23.3's priority queue can
		// deadlock on shutdown (see hubmanager's controllerOptions).
		Controller: config.Controller{UsePriorityQueue: ptr.To(false)},
	}
}

// Setup adds the agent to mgr, whose configuration reaches the managed
// cluster; hub reaches the hub with the agent's identity from the addon
// registration. It adds the probe loop and the addon lease updater as
// runnables and the /healthz and /readyz checks; the agent logs with the
// manager's logger. It reads with plain clients, a few GETs and LISTs per
// period, and asks nothing of the manager's cache, so the manager starts no
// informer on the managed cluster: a Node informer would keep every Node,
// image lists included, in memory for good (see listNodes).
func Setup(mgr ctrl.Manager, opts Options, hub *rest.Config) error {
	clients, err := newClients(mgr.GetConfig(), mgr.GetHTTPClient(), hub)
	if err != nil {
		return err
	}
	a, err := New(opts, clients, clock.RealClock{})
	if err != nil {
		return err
	}
	addonLease := lease.NewLeaseUpdater(clients.Managed, agentapi.AddonName, a.opts.AddonNamespace, a.Reporting)
	logger := mgr.GetLogger()
	for _, r := range []manager.Runnable{withLogger(logger, a.Run), withLogger(logger, a.renewAddonLease(addonLease))} {
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("adding the agent to the manager: %w", err)
		}
	}
	for name, check := range a.livenessChecks() {
		if err := mgr.AddHealthzCheck(name, check); err != nil {
			return fmt.Errorf("adding liveness check %s: %w", name, err)
		}
	}
	for name, check := range a.readinessChecks() {
		if err := mgr.AddReadyzCheck(name, check); err != nil {
			return fmt.Errorf("adding readiness check %s: %w", name, err)
		}
	}
	return nil
}

// withLogger runs fn with the manager's logger in its context: the manager
// starts runnables under its own base context, not the one given to Start.
func withLogger(logger logr.Logger, fn func(context.Context) error) manager.RunnableFunc {
	return func(ctx context.Context) error { return fn(ctrl.LoggerInto(ctx, logger)) }
}

// renewAddonLease returns the lease updater's runnable. The klusterlet
// reports the addon Available from this lease, which is renewed only while
// the agent reports: that is how the hub knows the agent's conditions are
// current. It starts after the first round so that its first renewal does
// not find the agent not yet reporting.
func (a *Agent) renewAddonLease(updater lease.LeaseUpdater) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-a.FirstRoundDone():
			updater.Start(ctx)
		case <-ctx.Done():
		}
		return nil
	}
}

// livenessChecks are what /healthz answers from: rounds keep ending.
func (a *Agent) livenessChecks() map[string]healthz.Checker {
	return map[string]healthz.Checker{"ping": healthz.Ping, "rounds": a.Alive}
}

// readinessChecks are what /readyz answers from: the first round has ended.
func (a *Agent) readinessChecks() map[string]healthz.Checker {
	return map[string]healthz.Checker{"ping": healthz.Ping, "first-round": a.Ready}
}

// newClients connects to both API servers. The two managed-cluster clients
// share the manager's connection.
func newClients(managed *rest.Config, managedHTTP *http.Client, hub *rest.Config) (Clients, error) {
	kube, err := kubernetes.NewForConfigAndClient(managed, managedHTTP)
	if err != nil {
		return Clients{}, fmt.Errorf("building the managed cluster client: %w", err)
	}
	claims, err := clusterclientset.NewForConfigAndClient(managed, managedHTTP)
	if err != nil {
		return Clients{}, fmt.Errorf("building the ClusterClaim client: %w", err)
	}
	hubScheme := runtime.NewScheme()
	if err := addonv1beta1.Install(hubScheme); err != nil {
		return Clients{}, err
	}
	hubClient, err := client.New(hub, client.Options{Scheme: hubScheme})
	if err != nil {
		return Clients{}, fmt.Errorf("building the hub client: %w", err)
	}
	return Clients{Managed: kube, Claims: claims.ClusterV1alpha1(), Hub: hubClient}, nil
}
