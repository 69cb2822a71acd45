// Command chart packages the clusterprofile-manager Helm chart as `helm
// package` does, with Helm's library (no helm binary): a
// clusterprofile-manager-<version>.tgz, after checking that the chart's
// version and appVersion are the VERSION the image is tagged with. `make
// chart` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
)

func main() {
	out := flag.String("out", "bin", "Directory to write the chart archive to.")
	version := flag.String("version", "", "The VERSION the chart's version and appVersion must equal.")
	flag.Parse()
	path, err := pack(*out, *version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

func pack(out, version string) (string, error) {
	c, err := chartrender.Load(chartrender.ChartDir("clusterprofile-manager"))
	if err != nil {
		return "", err
	}
	if version == "" || c.Metadata.Version != version || c.Metadata.AppVersion != version {
		return "", fmt.Errorf("the chart (Chart.yaml) has version %q and appVersion %q, want both %q (the VERSION file)",
			c.Metadata.Version, c.Metadata.AppVersion, version)
	}
	return chartrender.Package(c, out)
}
