//go:build linux

// Command ocmlocal-pod runs one process in a pod sandbox for the local OCM
// harness (see package podsandbox). Usage: ocmlocal-pod SPEC.json
package main

import (
	"fmt"
	"os"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/podsandbox"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ocmlocal-pod SPEC.json")
		os.Exit(2)
	}
	code, err := podsandbox.Run(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ocmlocal-pod:", err)
	}
	os.Exit(code)
}
