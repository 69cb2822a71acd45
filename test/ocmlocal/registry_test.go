//go:build linux

package ocmlocal

import (
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestRegistryServesTheLayoutsImage: the registry holds the layout's index
// tagged VERSION under clusterprofile-bundle, by tag and by digest.
func TestRegistryServesTheLayoutsImage(t *testing.T) {
	version, err := BundleVersion()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	idx, err := random.Index(64, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := BundleImageBuilt(dir); err == nil {
		t.Fatal("BundleImageBuilt: an empty layout counts as built")
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: version})); err != nil {
		t.Fatal(err)
	}
	e := &Env{opts: Options{ImageLayout: dir}, WorkDir: t.TempDir(), progress: io.Discard}
	if err := e.startRegistry(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Registry.close)
	want, _ := idx.Digest()
	if e.Registry.BundleDigest != want {
		t.Errorf("BundleDigest = %s, want %s", e.Registry.BundleDigest, want)
	}
	ref, err := name.ParseReference(e.Registry.BundleReference())
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
	if !e.Registry.Holds(e.Registry.BundleReference()) || e.Registry.Holds("quay.io/open-cluster-management/clusterprofile-bundle:"+version) {
		t.Error("Holds tells the local registry's images from others wrongly")
	}
}
