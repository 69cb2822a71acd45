package chartrender

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Package writes a chart as `helm package` does, into out, and returns the
// archive's path.
func Package(c *chart.Chart, out string) (string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	path, err := chartutil.Save(c, out)
	if err != nil {
		return "", fmt.Errorf("packaging chart %s: %w", c.Name(), err)
	}
	return path, nil
}

// PreviousRelease is what `make previous` (hack/previous.sh) writes for the
// upgrade tests: the previous release's version label, its chart archive
// and its image's OCI layout.
type PreviousRelease struct {
	Version, Chart, ImageLayout string
}

// ReadPreviousRelease reads the previous release of the named chart from
// dir (bin/previous); it fails when the label or the chart archive is
// missing.
func ReadPreviousRelease(dir, chartName string) (PreviousRelease, error) {
	label, err := os.ReadFile(filepath.Join(dir, "VERSION_LABEL"))
	if err != nil {
		return PreviousRelease{}, fmt.Errorf("the previous release (run `make previous`): %w", err)
	}
	version := strings.TrimSpace(string(label))
	p := PreviousRelease{Version: version, Chart: filepath.Join(dir, chartName+"-"+version+".tgz"),
		ImageLayout: filepath.Join(dir, "image")}
	if _, err := os.Stat(p.Chart); err != nil {
		return PreviousRelease{}, fmt.Errorf("the previous release's chart (run `make previous`): %w", err)
	}
	return p, nil
}
