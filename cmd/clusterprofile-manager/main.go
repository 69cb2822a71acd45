// Command clusterprofile-manager runs the hub controllers that publish OCM
// ManagedClusters as ClusterProfiles.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
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
	klog.SetLogger(logger) // client-go and the addon-framework log through klog
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
