package main

import (
	goflag "flag"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// options are the command-line settings.
type options struct {
	agent         agent.Options
	hubKubeconfig string
	kubeconfig    string
	probeAddr     string
}

func parseOptions(args []string) (*options, *zap.Options, error) {
	o := &options{}
	a := &o.agent
	fs := pflag.NewFlagSet("clusterprofile-agent", pflag.ContinueOnError)
	fs.StringVar(&o.hubKubeconfig, "hub-kubeconfig", "",
		"Kubeconfig of the agent's hub identity (from the addon registration).")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "",
		"Kubeconfig of the managed cluster (default: the in-cluster configuration).")
	fs.StringVar(&a.ClusterName, "cluster-name", "", "Name of the managed cluster, which is its namespace on the hub.")
	fs.StringVar(&a.AddonNamespace, "addon-namespace", agentapi.DefaultInstallNamespace,
		"Namespace the agent runs in on the managed cluster, where it keeps its addon lease.")
	fs.DurationVar(&a.Period, "period", agent.DefaultPeriod,
		"How often to probe. Writes to the hub (and claims) go out at most once per 30s whatever the period.")
	fs.DurationVar(&a.LeaseStaleAfter, "lease-stale-after", agent.DefaultLeaseStaleAfter,
		"A controller-manager or scheduler leader Lease renewed longer ago than this makes the control plane unhealthy.")
	fs.IntVar(&a.UnhealthyNodeTolerance, "unhealthy-node-tolerance", 0,
		"How many nodes may be not Ready or under pressure while AllNodesHealthy stays True.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints; 0 disables them.")
	a.Facts = damping.Default()
	a.Facts.AddFlags(fs)

	zapOpts := &zap.Options{}
	gofs := goflag.NewFlagSet("", goflag.ContinueOnError)
	zapOpts.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	switch {
	case o.hubKubeconfig == "":
		return nil, nil, fmt.Errorf("--hub-kubeconfig must be set")
	case a.ClusterName == "":
		return nil, nil, fmt.Errorf("--cluster-name must be set")
	}
	return o, zapOpts, nil
}

// configs loads both kubeconfigs: the managed cluster's, which the agent's
// manager runs on, and the hub's.
func (o *options) configs() (managed, hub *rest.Config, err error) {
	hub, err = clientcmd.BuildConfigFromFlags("", o.hubKubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the hub kubeconfig %s: %w", o.hubKubeconfig, err)
	}
	if o.kubeconfig == "" {
		managed, err = rest.InClusterConfig()
	} else {
		managed, err = clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("loading the managed cluster configuration: %w", err)
	}
	return managed, hub, nil
}
