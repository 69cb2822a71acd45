// Command clusterprofile-agent runs on every managed cluster: it reports
// control plane and node health to the hub and node facts as ClusterClaims.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/logging"
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
	logger := logging.Setup(zapOpts)
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
