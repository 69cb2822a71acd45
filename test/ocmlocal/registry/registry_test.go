//go:build linux

package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
)

// TestRegistryServesTheLayoutsImage: the registry holds the layout's index
// tagged VERSION under clusterprofile-bundle, by tag and by digest, the
// chart under VERSION, and the previous release's image and chart under its
// version label.
func TestRegistryServesTheLayoutsImage(t *testing.T) {
	version, err := BundleVersion()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := BundleImageBuilt(dir); err == nil {
		t.Fatal("BundleImageBuilt: an empty directory counts as built")
	}
	idx := writeLayout(t, dir, version)
	previous := t.TempDir()
	if err := PreviousReleaseBuilt(previous); err == nil {
		t.Fatal("PreviousReleaseBuilt: an empty directory counts as built")
	}
	const previousVersion = "0.0.1-git.0123abc"
	previousIdx := writePreviousRelease(t, previous, previousVersion)
	if err := PreviousReleaseBuilt(previous); err != nil {
		t.Fatalf("PreviousReleaseBuilt: %v", err)
	}
	r, err := Start(Options{ImageLayout: dir, PreviousRelease: previous, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	want, _ := idx.Digest()
	if r.BundleDigest != want {
		t.Errorf("BundleDigest = %s, want %s", r.BundleDigest, want)
	}
	ref, err := name.ParseReference(r.BundleReference())
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref)
	if err != nil {
		t.Fatalf("the pushed image: %v", err)
	}
	if desc.Digest != want {
		t.Errorf("%s is %s, want %s", ref, desc.Digest, want)
	}
	if !r.Holds(r.BundleReference()) || r.Holds("ghcr.io/open-cluster-management-io/clusterprofile-bundle:"+version) {
		t.Error("Holds tells the local registry's images from others wrongly")
	}
	if r.PreviousVersion != previousVersion {
		t.Errorf("PreviousVersion = %q, want %q", r.PreviousVersion, previousVersion)
	}
	previousRef, err := name.ParseReference(r.BundleRepository + ":" + previousVersion)
	if err != nil {
		t.Fatal(err)
	}
	if desc, err := remote.Head(previousRef); err != nil {
		t.Errorf("the previous release's image: %v", err)
	} else if want, _ := previousIdx.Digest(); desc.Digest != want {
		t.Errorf("%s is %s, want %s", previousRef, desc.Digest, want)
	}
	for _, v := range []string{version, previousVersion} {
		c, err := r.PullChart(v)
		if err != nil {
			t.Errorf("pulling the chart %s from %s: %v", v, r.ChartReference, err)
			continue
		}
		if c.Metadata.Version != v || c.Metadata.AppVersion != v {
			t.Errorf("the chart pulled at %s has version %q and appVersion %q", v, c.Metadata.Version, c.Metadata.AppVersion)
		}
	}
}

// writeLayout writes an OCI layout to dir with a random image index tagged
// tag, and returns the index.
func writeLayout(t *testing.T, dir, tag string) v1.ImageIndex {
	t.Helper()
	idx, err := random.Index(64, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: tag})); err != nil {
		t.Fatal(err)
	}
	return idx
}

// writePreviousRelease writes to dir what `make previous` does: an image
// layout, the chart versioned version, and VERSION_LABEL.
func writePreviousRelease(t *testing.T, dir, version string) v1.ImageIndex {
	t.Helper()
	idx := writeLayout(t, filepath.Join(dir, "image"), version)
	c, err := chartrender.Load(chartrender.ChartDir(BundleChart))
	if err != nil {
		t.Fatal(err)
	}
	c.Metadata.Version, c.Metadata.AppVersion = version, version
	if _, err := chartrender.Package(c, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "VERSION_LABEL"), []byte(version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return idx
}
