// Command kubectl-clusterprofile is the kubectl plugin `kubectl
// clusterprofile` (doctor, get): ClusterProfiles seen from a consumer's side.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "kubectl-clusterprofile")
		return
	}
	os.Exit(doctor.Execute(os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
