//go:build linux

// Package registry runs the harness's OCI registry: go-containerregistry's
// pkg/registry in this process on 127.0.0.1, holding the bundle's image
// (pushed from the OCI layout `make image` writes, with its SBOM
// referrers) and chart, and the previous release's (`make previous`),
// from which the kubelets pull and Helm installs.
package registry

import (
	"context"
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
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
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

// BundleChart is the bundle's chart (charts/clusterprofile-manager).
const BundleChart = "clusterprofile-manager"

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
	// workDir holds the blobs, the charts packaged and Helm's cache.
	workDir string
}

// Options say what Start pushes.
type Options struct {
	// WorkDir holds the registry's blobs and Helm's files.
	WorkDir string
	// ImageLayout is the bundle's image layout (default BundleImageLayout).
	ImageLayout string
	// PreviousRelease, if set, is what `make previous` wrote: the previous
	// release's image and chart, pushed too.
	PreviousRelease string
	// Progress receives one line once everything is pushed.
	Progress func(format string, args ...any)
}

// BundleReference is the bundle image's reference by tag.
func (r *Registry) BundleReference() string { return r.BundleRepository + ":" + r.BundleTag }

// Holds tells whether an image reference names this registry.
func (r *Registry) Holds(image string) bool {
	return r != nil && strings.HasPrefix(image, r.Host+"/")
}

// Start serves a registry on a free port and pushes into it the bundle's
// image from the layout, with the layout's SBOM referrers, and the bundle's
// chart; with Options.PreviousRelease, the previous release's too.
func Start(opts Options) (*Registry, error) {
	start := time.Now()
	layoutDir := opts.ImageLayout
	if layoutDir == "" {
		layoutDir = BundleImageLayout()
	}
	idx, version, err := bundleIndex(layoutDir)
	if err != nil {
		return nil, err
	}
	r, err := serve(opts.WorkDir, version)
	if err != nil {
		return nil, err
	}
	if err := r.pushAll(layoutDir, idx, version, opts.PreviousRelease); err != nil {
		r.Close()
		return nil, err
	}
	if opts.Progress != nil {
		opts.Progress("registry on %s holds %s@%s (pushed from %s) and the chart %s:%s in %s",
			r.Host, r.BundleReference(), r.BundleDigest, layoutDir, r.ChartReference, version, process.Since(start))
	}
	return r, nil
}

// serve starts an empty registry whose blobs are in the work directory.
func serve(workDir, version string) (*Registry, error) {
	blobs := filepath.Join(workDir, "registry")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, err
	}
	charts, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptCredentialsFile(filepath.Join(workDir, "registry-credentials.json")))
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Registry{Host: l.Addr().String(), BundleTag: version, charts: charts, workDir: workDir}
	r.BundleRepository = r.Host + "/" + bundleImageName
	r.ChartReference = "oci://" + r.Host + "/" + chartsRepository + "/" + BundleChart
	r.server = &http.Server{
		Handler: registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(blobs)),
			registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = r.server.Serve(l) }()
	return r, nil
}

// pushAll pushes the bundle's image and chart of version, and the previous
// release's from previousDir when set.
func (r *Registry) pushAll(layoutDir string, idx v1.ImageIndex, version, previousDir string) error {
	var err error
	if r.BundleDigest, err = r.pushImage(layoutDir, idx, version); err != nil {
		return err
	}
	chart, err := packageChart(chartrender.ChartDir(BundleChart), filepath.Join(r.workDir, "charts"))
	if err != nil {
		return err
	}
	if err := r.pushChart(chart, version); err != nil {
		return err
	}
	if previousDir != "" {
		return r.pushPreviousRelease(previousDir)
	}
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

// Close stops serving.
func (r *Registry) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.server.Shutdown(ctx)
}

// ChartClient is Helm's client of the registry (plain HTTP).
func (r *Registry) ChartClient() *helmregistry.Client { return r.charts }

// PullChart pulls a version of the bundle's chart from the registry as
// `helm install oci://... --version V --plain-http` does: Helm's
// downloader, its cache in the work directory.
func (r *Registry) PullChart(version string) (*chart.Chart, error) {
	install := action.NewInstall(&action.Configuration{RegistryClient: r.charts})
	install.Version, install.PlainHTTP = version, true
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(r.workDir, "helm", "cache")
	settings.RepositoryConfig = filepath.Join(r.workDir, "helm", "repositories.yaml")
	path, err := install.LocateChart(r.ChartReference, settings)
	if err != nil {
		return nil, fmt.Errorf("helm pull %s --version %s: %w", r.ChartReference, version, err)
	}
	return loader.Load(path)
}
