// Command cp-creds is a client-go exec credential plugin that returns the
// ManagedServiceAccount token synced next to a cluster's ClusterProfile.
package main

import (
	"context"
	"os"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "cp-creds")
		return
	}
	provider, err := cpcreds.NewProviderFromProcess(os.Args[1:])
	if err != nil {
		os.Exit(cpcreds.ReportSetupError(os.Stdout, os.Stderr, err))
	}
	os.Exit(cpcreds.Run(context.Background(), provider, os.Getenv(cpcreds.EnvExecInfo), os.Stdout, os.Stderr))
}
