// Command clusterprofile-manager runs the hub controllers that publish OCM
// ManagedClusters as ClusterProfiles.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/logging"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "clusterprofile-manager")
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
	logging.Setup(zapOpts)
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err == nil {
		cfg.QPS, cfg.Burst = opts.qps, opts.burst
		err = start(ctx, cfg, opts.manager)
	}
	if err != nil {
		ctrl.Log.Error(err, "clusterprofile-manager failed")
		os.Exit(1)
	}
}
