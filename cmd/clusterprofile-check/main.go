// Command clusterprofile-check is the chart's `helm test`: it checks that
// the manager is ready and leading, that the ClusterProfile API is served,
// and that the release's admission policies exist as the chart rendered them.
package main

import (
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/installcheck"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "clusterprofile-check")
		return
	}
	if err := installcheck.Main(ctrl.SetupSignalHandler(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "clusterprofile-check:", err)
		os.Exit(1)
	}
}
