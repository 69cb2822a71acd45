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
)

// bundleImageName is the bundle image's repository in the local registry.
const bundleImageName = "clusterprofile-bundle"

// refNameAnnotation names a manifest of an OCI layout (hack/image tags the
// image index with VERSION).
const refNameAnnotation = "org.opencontainers.image.ref.name"

// ErrImageMissing is returned (wrapped) when Options.Registry is set and
// the bundle's image layout is not built.
var ErrImageMissing = errors.New("the bundle's image is not built")

// Registry is the environment's OCI registry: go-containerregistry's
// pkg/registry in this process, on 127.0.0.1, its blobs in the work
// directory. It holds the bundle's image, pushed from the OCI layout that
// `make image` writes, and the kubelets pull from it.
type Registry struct {
	// Host is 127.0.0.1:<port>.
	Host string
	// BundleRepository is Host/clusterprofile-bundle, the chart's
	// image.repository; BundleTag is VERSION.
	BundleRepository, BundleTag string
	// BundleDigest is the image index's digest.
	BundleDigest v1.Hash

	server *http.Server
}

// BundleReference is the bundle image's reference by tag.
func (r *Registry) BundleReference() string { return r.BundleRepository + ":" + r.BundleTag }

// Holds tells whether an image reference names this registry.
func (r *Registry) Holds(image string) bool {
	return r != nil && strings.HasPrefix(image, r.Host+"/")
}

// BundleImageLayout is where `make image` writes the bundle's image.
func BundleImageLayout() string { return filepath.Join(RepoRoot(), "bin", "image") }

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
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s is no OCI layout (run `make image`): %v", ErrImageMissing, dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %v", ErrImageMissing, dir, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %v", ErrImageMissing, dir, err)
	}
	for _, d := range m.Manifests {
		if d.Annotations[refNameAnnotation] == version && d.MediaType.IsIndex() {
			idx, err := top.ImageIndex(d.Digest)
			return idx, version, err
		}
	}
	return nil, "", fmt.Errorf("%w: %s has no image index tagged %s (VERSION); run `make image`", ErrImageMissing, dir, version)
}

// startRegistry serves a registry on a free port and pushes the bundle's
// image from the layout into it, with the layout's SBOM referrers.
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r := &Registry{Host: l.Addr().String(), BundleTag: version}
	r.BundleRepository = r.Host + "/" + bundleImageName
	r.server = &http.Server{
		Handler: registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(blobs)),
			registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = r.server.Serve(l) }()
	e.Registry = r
	ref, err := name.ParseReference(r.BundleReference())
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		return fmt.Errorf("pushing %s from %s: %w", ref, layoutDir, err)
	}
	if r.BundleDigest, err = idx.Digest(); err != nil {
		return err
	}
	if err := pushReferrers(layoutDir, ref.Context(), idx); err != nil {
		return err
	}
	e.progressf("registry on %s holds %s@%s (pushed from %s in %s)", r.Host, r.BundleReference(), r.BundleDigest, layoutDir, since(start))
	return nil
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
