//go:build linux

package ocmlocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	helmregistry "helm.sh/helm/v3/pkg/registry"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// bundleImageName is the bundle image's repository in the local registry,
// chartsRepository the path its charts are pushed under (oci://<host>/charts).
const (
	bundleImageName  = "clusterprofile-bundle"
	chartsRepository = "charts"
)

// refNameAnnotation names a manifest of an OCI layout (hack/image tags the
// image index with VERSION).
const refNameAnnotation = "org.opencontainers.image.ref.name"

// ErrImageMissing is returned (wrapped) when Options.Registry is set and
// the bundle's image layout is not built.
var ErrImageMissing = errors.New("the bundle's image is not built")

// Registry is the environment's OCI registry: go-containerregistry's
// pkg/registry in this process, on 127.0.0.1, its blobs in the work
// directory. It holds the bundle's image, pushed from the OCI layout that
// `make image` writes, which the kubelets pull, and the bundle's chart as an
// OCI artifact, which InstallBundle installs from; with
// Options.PreviousRelease, the previous release's image and chart too.
type Registry struct {
	// Host is 127.0.0.1:<port>.
	Host string
	// BundleRepository is Host/clusterprofile-bundle, the chart's
	// image.repository; BundleTag is VERSION.
	BundleRepository, BundleTag string
	// BundleDigest is the image index's digest.
	BundleDigest v1.Hash
	// ChartReference is oci://Host/charts/clusterprofile-manager, which
	// holds the chart under VERSION (and PreviousVersion).
	ChartReference string
	// PreviousVersion is the previous release's version label
	// (bin/previous/VERSION_LABEL): its image's tag and its chart's version.
	PreviousVersion string

	server *http.Server
	// charts is Helm's registry client, plain HTTP, with its own
	// credentials file in the work directory.
	charts *helmregistry.Client
}

// BundleReference is the bundle image's reference by tag.
func (r *Registry) BundleReference() string { return r.BundleRepository + ":" + r.BundleTag }

// Holds tells whether an image reference names this registry.
func (r *Registry) Holds(image string) bool {
	return r != nil && strings.HasPrefix(image, r.Host+"/")
}

// BundleImageLayout is where `make image` writes the bundle's image.
func BundleImageLayout() string { return filepath.Join(RepoRoot(), "bin", "image") }

// PreviousReleaseDir is where `make previous` writes the previous
// release's image and chart.
func PreviousReleaseDir() string { return filepath.Join(RepoRoot(), "bin", "previous") }

// PreviousReleaseBuilt tells whether dir holds the previous release's image
// and chart, and if not, how to build them.
func PreviousReleaseBuilt(dir string) error {
	_, _, err := previousRelease(dir)
	return err
}

// previousRelease reads what `make previous` wrote to dir: the previous
// release, and its image index, tagged with its version label.
func previousRelease(dir string) (chartrender.PreviousRelease, v1.ImageIndex, error) {
	previous, err := chartrender.ReadPreviousRelease(dir, bundleChartName)
	if err != nil {
		return previous, nil, fmt.Errorf("%w: %v", ErrImageMissing, err)
	}
	idx, err := layoutIndex(previous.ImageLayout, previous.Version)
	return previous, idx, err
}

// BundleVersion is the VERSION file: the image's tag and the chart's appVersion.
func BundleVersion() (string, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "VERSION"))
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

// startRegistry serves a registry on a free port and pushes into it the
// bundle's image from the layout, with the layout's SBOM referrers, and the
// bundle's chart; with Options.PreviousRelease, the previous release's too.
func (e *Env) startRegistry() error {
	start := time.Now()
	layoutDir := e.opts.ImageLayout
	if layoutDir == "" {
		layoutDir = BundleImageLayout()
	}
	idx, version, err := bundleIndex(layoutDir)
	if err != nil {
		return err
	}
	blobs := filepath.Join(e.WorkDir, "registry")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return err
	}
	charts, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptCredentialsFile(filepath.Join(e.WorkDir, "registry-credentials.json")))
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r := &Registry{Host: l.Addr().String(), BundleTag: version, charts: charts}
	r.BundleRepository = r.Host + "/" + bundleImageName
	r.ChartReference = "oci://" + r.Host + "/" + chartsRepository + "/" + bundleChartName
	r.server = &http.Server{
		Handler: registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(blobs)),
			registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = r.server.Serve(l) }()
	e.Registry = r
	if r.BundleDigest, err = r.pushImage(layoutDir, idx, version); err != nil {
		return err
	}
	chart, err := packageChart(chartrender.ChartDir(bundleChartName), filepath.Join(e.WorkDir, "charts"))
	if err != nil {
		return err
	}
	if err := r.pushChart(chart, version); err != nil {
		return err
	}
	if e.opts.PreviousRelease != "" {
		if err := r.pushPreviousRelease(e.opts.PreviousRelease); err != nil {
			return err
		}
	}
	e.progressf("registry on %s holds %s@%s (pushed from %s) and the chart %s:%s in %s",
		r.Host, r.BundleReference(), r.BundleDigest, layoutDir, r.ChartReference, version, process.Since(start))
	return nil
}

// pushImage pushes an image index and its SBOM referrers from a layout
// under tag, and returns the index's digest.
func (r *Registry) pushImage(layoutDir string, idx v1.ImageIndex, tag string) (v1.Hash, error) {
	ref, err := name.ParseReference(r.BundleRepository + ":" + tag)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s from %s: %w", ref, layoutDir, err)
	}
	if err := pushReferrers(layoutDir, ref.Context(), idx); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}

// pushChart pushes a chart archive as `helm push` does; Helm checks that
// the version is the chart's.
func (r *Registry) pushChart(archive []byte, version string) error {
	ref := strings.TrimPrefix(r.ChartReference, "oci://") + ":" + version
	if _, err := r.charts.Push(archive, ref); err != nil {
		return fmt.Errorf("helm push %s: %w", ref, err)
	}
	return nil
}

// pushPreviousRelease pushes what `make previous` wrote to dir: the
// previous release's image (tagged with its version label) and chart.
func (r *Registry) pushPreviousRelease(dir string) error {
	previous, idx, err := previousRelease(dir)
	if err != nil {
		return err
	}
	if _, err := r.pushImage(previous.ImageLayout, idx, previous.Version); err != nil {
		return err
	}
	chart, err := os.ReadFile(previous.Chart)
	if err != nil {
		return err
	}
	if err := r.pushChart(chart, previous.Version); err != nil {
		return err
	}
	r.PreviousVersion = previous.Version
	return nil
}

// packageChart packages a chart directory as `helm package` does, into
// dir, and returns the archive.
func packageChart(chartDir, dir string) ([]byte, error) {
	c, err := chartrender.Load(chartDir)
	if err != nil {
		return nil, err
	}
	path, err := chartrender.Package(c, dir)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// pushReferrers pushes the layout's artifacts whose subject is one of the
// index's manifests (hack/image's SBOMs), as `make image PUSH=` does.
func pushReferrers(layoutDir string, repo name.Repository, idx v1.ImageIndex) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	subjects := map[v1.Hash]bool{}
	for _, d := range m.Manifests {
		subjects[d.Digest] = true
	}
	p, err := layout.FromPath(layoutDir)
	if err != nil {
		return err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return err
	}
	tm, err := top.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range tm.Manifests {
		if d.ArtifactType == "" || !d.MediaType.IsImage() {
			continue
		}
		artifact, err := top.Image(d.Digest)
		if err != nil {
			return err
		}
		am, err := artifact.Manifest()
		if err != nil {
			return err
		}
		if am.Subject == nil || !subjects[am.Subject.Digest] {
			continue
		}
		if err := remote.Write(repo.Digest(d.Digest.String()), artifact); err != nil {
			return fmt.Errorf("pushing the referrer %s: %w", d.Digest, err)
		}
	}
	return nil
}

func (r *Registry) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.server.Shutdown(ctx)
}
