// Command clusterprofile-agent runs on every managed cluster: it reports
// control plane and node health to the hub and node facts as ClusterClaims.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
)

func main() {
	opts, zapOpts, err := parseOptions(os.Args[1:])
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	logger := zap.New(zap.UseFlagOptions(zapOpts))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // addon-framework's lease updater logs through klog
	ctx := ctrl.LoggerInto(ctrl.SetupSignalHandler(), logger.WithName("agent"))
	cfg, err := opts.config()
	if err == nil {
		err = agent.Run(ctx, cfg)
	}
	if err != nil {
		logger.Error(err, "clusterprofile-agent failed")
		os.Exit(1)
	}
}
