// Command chart packages the clusterprofile-manager Helm chart as `helm
// package` does, with Helm's library (no helm binary): a
// clusterprofile-manager-<version>.tgz, after checking that the chart's
// version and appVersion are the VERSION the image is tagged with, and that
// its default image is the repository the release pushes to. `make chart`
// runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/chart"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

func main() {
	out := flag.String("out", "bin", "Directory to write the chart archive to.")
	version := flag.String("version", "", "The VERSION the chart's version and appVersion must equal.")
	imageRepository := flag.String("image-repository", "", "The repository the release pushes the image to, which the chart's image.repository must name.")
	flag.Parse()
	path, err := pack(*out, *version, *imageRepository)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

func pack(out, version, imageRepository string) (string, error) {
	c, err := loadChart()
	if err != nil {
		return "", err
	}
	if version == "" || c.Metadata.Version != version || c.Metadata.AppVersion != version {
		return "", fmt.Errorf("the chart (Chart.yaml) has version %q and appVersion %q, want both %q (the VERSION file)",
			c.Metadata.Version, c.Metadata.AppVersion, version)
	}
	image, _ := c.Values["image"].(map[string]any)
	if repository, _ := image["repository"].(string); repository != imageRepository {
		return "", fmt.Errorf("the chart's image.repository (values.yaml) is %q, but the release pushes the image to %q: "+
			"change values.yaml or REGISTRY so that they agree", repository, imageRepository)
	}
	return chartrender.Package(c, out)
}

func loadChart() (*chart.Chart, error) {
	return chartrender.Load(chartrender.ChartDir("clusterprofile-manager"))
}
