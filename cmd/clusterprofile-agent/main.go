// Command clusterprofile-agent runs on every managed cluster: it reports
// control plane and node health to the hub and node facts as ClusterClaims.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/logging"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "clusterprofile-agent")
		return
	}
	opts, zapOpts, err := parseOptions(os.Args[1:])
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	logger := logging.Setup(zapOpts).WithName("agent")
	if err := run(ctrl.SetupSignalHandler(), opts, logger); err != nil {
		logger.Error(err, "clusterprofile-agent failed")
		os.Exit(1)
	}
}

// run starts the agent on a manager for the managed cluster and returns when
// ctx ends and the agent has stopped.
func run(ctx context.Context, opts *options, logger logr.Logger) error {
	managed, hub, err := opts.configs()
	if err != nil {
		return err
	}
	mgrOpts := agent.ManagerOptions(opts.probeAddr)
	mgrOpts.Logger = logger
	mgr, err := ctrl.NewManager(managed, mgrOpts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := agent.Setup(mgr, opts.agent, hub); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
