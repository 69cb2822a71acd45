//go:build linux

package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
)

// refNameAnnotation names a manifest of an OCI layout (hack/image tags the
// image index with VERSION).
const refNameAnnotation = "org.opencontainers.image.ref.name"

// ErrImageMissing is returned (wrapped) when the bundle's image layout is not built.
var ErrImageMissing = errors.New("the bundle's image is not built")

// BundleImageLayout is where `make image` writes the bundle's image.
func BundleImageLayout() string { return filepath.Join(binaries.RepoRoot(), "bin", "image") }

// PreviousReleaseDir is where `make previous` writes the previous
// release's image and chart.
func PreviousReleaseDir() string { return filepath.Join(binaries.RepoRoot(), "bin", "previous") }

// PreviousReleaseBuilt tells whether dir holds the previous release's image
// and chart, and if not, how to build them.
func PreviousReleaseBuilt(dir string) error {
	_, _, err := previousRelease(dir)
	return err
}

// previousRelease reads what `make previous` wrote to dir: the previous
// release, and its image index, tagged with its version label.
func previousRelease(dir string) (chartrender.PreviousRelease, v1.ImageIndex, error) {
	previous, err := chartrender.ReadPreviousRelease(dir, BundleChart)
	if err != nil {
		return previous, nil, fmt.Errorf("%w: %v", ErrImageMissing, err)
	}
	idx, err := layoutIndex(previous.ImageLayout, previous.Version)
	return previous, idx, err
}

// BundleVersion is the VERSION file: the image's tag and the chart's appVersion.
func BundleVersion() (string, error) {
	raw, err := os.ReadFile(filepath.Join(binaries.RepoRoot(), "VERSION"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(raw)), nil
}

// BundleImageBuilt tells whether the layout holds the bundle's image of
// this VERSION, and if not, how to build it.
func BundleImageBuilt(dir string) error {
	_, _, err := bundleIndex(dir)
	return err
}

// bundleIndex reads the image index tagged VERSION from the layout.
func bundleIndex(dir string) (v1.ImageIndex, string, error) {
	version, err := BundleVersion()
	if err != nil {
		return nil, "", err
	}
	idx, err := layoutIndex(dir, version)
	return idx, version, err
}

// layoutIndex reads the image index tagged tag from an OCI layout.
func layoutIndex(dir, tag string) (v1.ImageIndex, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is no OCI layout (run `make image`): %v", ErrImageMissing, dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrImageMissing, dir, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrImageMissing, dir, err)
	}
	for _, d := range m.Manifests {
		if d.Annotations[refNameAnnotation] == tag && d.MediaType.IsIndex() {
			return top.ImageIndex(d.Digest)
		}
	}
	return nil, fmt.Errorf("%w: %s has no image index tagged %s; run `make image`", ErrImageMissing, dir, tag)
}
