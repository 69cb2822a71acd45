package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"open-cluster-management.io/addon-framework/pkg/lease"
	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

// Config is everything Run needs.
type Config struct {
	Options
	// Managed reaches the managed cluster's API server; Hub the hub's, with
	// the agent's identity from the addon registration.
	Managed *rest.Config
	Hub     *rest.Config
	// ProbeAddr serves /healthz and /readyz; empty or "0" serves nothing.
	ProbeAddr string
}

// NewClients connects to both API servers. The two managed-cluster clients
// share one connection.
func NewClients(managed, hub *rest.Config) (Clients, error) {
	httpClient, err := rest.HTTPClientFor(managed)
	if err != nil {
		return Clients{}, fmt.Errorf("connecting to the managed cluster: %w", err)
	}
	kube, err := kubernetes.NewForConfigAndClient(managed, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("building the managed cluster client: %w", err)
	}
	claims, err := clusterclientset.NewForConfigAndClient(managed, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("building the ClusterClaim client: %w", err)
	}
	addons, err := addonclientset.NewForConfig(hub)
	if err != nil {
		return Clients{}, fmt.Errorf("building the hub client: %w", err)
	}
	return Clients{Managed: kube, Claims: claims.ClusterV1alpha1(), Hub: addons.AddonV1beta1()}, nil
}

// Run runs the agent, its addon lease and its probe endpoints until ctx
// ends, then stops them all and returns nil; it fails only on start-up.
func Run(ctx context.Context, cfg Config) error {
	clients, err := NewClients(cfg.Managed, cfg.Hub)
	if err != nil {
		return err
	}
	a, err := New(cfg.Options, clients, clock.RealClock{})
	if err != nil {
		return err
	}
	logger := log.FromContext(ctx)
	var wg sync.WaitGroup
	if cfg.ProbeAddr != "" && cfg.ProbeAddr != "0" {
		listener, err := net.Listen("tcp", cfg.ProbeAddr)
		if err != nil {
			return fmt.Errorf("serving probes on %s: %w", cfg.ProbeAddr, err)
		}
		server := &http.Server{Handler: probeHandler(a), ReadHeaderTimeout: 5 * time.Second}
		wg.Go(func() {
			if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "Probe server stopped")
			}
		})
		wg.Go(func() {
			<-ctx.Done()
			_ = server.Close()
		})
	}
	// The klusterlet reports the addon Available from this lease, which is
	// renewed only while the agent reports: that is how the hub knows the
	// agent's conditions are current. It starts after the first round so
	// that its first renewal does not find the agent not yet reporting.
	addonLease := lease.NewLeaseUpdater(clients.Managed, agentapi.AddonName, cfg.AddonNamespace, a.Reporting)
	wg.Go(func() {
		select {
		case <-a.FirstRoundDone():
			addonLease.Start(ctx)
		case <-ctx.Done():
		}
	})
	logger.Info("Starting clusterprofile-agent", "cluster", cfg.ClusterName, "addonNamespace", cfg.AddonNamespace,
		"period", a.opts.Period.String(), "minWriteInterval", a.opts.MinWriteInterval.String())
	err = a.Run(ctx)
	wg.Wait()
	return err
}

func probeHandler(a *Agent) http.Handler {
	mux := http.NewServeMux()
	for path, checks := range map[string]map[string]healthz.Checker{
		"/healthz": {"ping": healthz.Ping, "rounds": a.Alive},
		"/readyz":  {"ping": healthz.Ping, "first-round": a.Ready},
	} {
		handler := http.StripPrefix(path, &healthz.Handler{Checks: checks})
		mux.Handle(path, handler)
		mux.Handle(path+"/", handler)
	}
	return mux
}
