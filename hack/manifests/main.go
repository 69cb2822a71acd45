// Command manifests renders the clusterprofile-manager chart with
// hack/manifests/values.yaml into manifests/clusterprofile-manager.yaml, for
// users who install with `kubectl apply`. Run it with `make manifests`; a test
// in test/chart fails when the committed file differs from a fresh render.
package main

import (
	"flag"
	"fmt"
	"os"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

func main() {
	out := flag.String("out", "manifests/clusterprofile-manager.yaml", "file to write")
	valuesFile := flag.String("values", "hack/manifests/values.yaml", "values to render the chart with")
	flag.Parse()
	manifest, err := chartrender.Manifests(*valuesFile)
	if err == nil {
		err = os.WriteFile(*out, []byte(manifest), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rendering the plain manifests:", err)
		os.Exit(1)
	}
}
