//go:build linux

package images

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
)

// file is one entry of a test layer; a name ending in "/" is a directory.
type file struct {
	name, content string
	mode          int64
	uid           int
}

func layerOf(t *testing.T, files ...file) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, Typeflag: tar.TypeReg, Size: int64(len(f.content))}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func imageOf(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.User = "65532"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func push(t *testing.T, ref string, img v1.Image) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestImageStoreUnpacksAndHonoursThePullPolicy: the layers are applied in
// order (whiteouts remove files of lower layers), modes and owners kept;
// IfNotPresent keeps the digest a reference resolved to without asking the
// registry, Always resolves it again, Never takes only what is present.
func TestImageStoreUnpacksAndHonoursThePullPolicy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("unpacking keeps the files' owners: needs root")
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := host + "/app:1.0"
	first := imageOf(t,
		layerOf(t, file{name: "app", content: "v1", mode: 0o755}, file{name: "etc/", mode: 0o755},
			file{name: "etc/gone", content: "x", mode: 0o644}, file{name: "secret", content: "s", mode: 0o600},
			file{name: "home/", mode: 0o700, uid: 65532}),
		layerOf(t, file{name: "etc/.wh.gone", mode: 0o644}, file{name: "etc/kept", content: "k", mode: 0o644}))
	firstDigest := push(t, ref, first)
	s := NewStore(t.TempDir())

	got, err := s.Get(ref, corev1.PullIfNotPresent)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != firstDigest || got.Config.User != "65532" {
		t.Errorf("got %s (user %q), want %s (user 65532)", got.Digest, got.Config.User, firstDigest)
	}
	for path, want := range map[string]os.FileMode{"app": 0o755, "etc/kept": 0o644, "secret": 0o600, "home": os.ModeDir | 0o700} {
		fi, err := os.Stat(filepath.Join(got.Rootfs, path))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %s, want %s", path, fi.Mode(), want)
		}
	}
	if _, err := os.Stat(filepath.Join(got.Rootfs, "etc", "gone")); !os.IsNotExist(err) {
		t.Errorf("etc/gone, whited out by the upper layer, is there: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(got.Rootfs, "home")); err == nil && fi.Sys().(*syscall.Stat_t).Uid != 65532 {
		t.Errorf("home is owned by %d, want 65532", fi.Sys().(*syscall.Stat_t).Uid)
	}

	second := imageOf(t, layerOf(t, file{name: "app", content: "v2", mode: 0o755}))
	secondDigest := push(t, ref, second)
	if got, err := s.Get(ref, corev1.PullIfNotPresent); err != nil || got.Digest != firstDigest || s.resolved != 1 {
		t.Errorf("IfNotPresent: %v, %v after %d resolutions; want %s without asking the registry again", got, err, s.resolved, firstDigest)
	}
	got, err = s.Get(ref, corev1.PullAlways)
	if err != nil || got.Digest != secondDigest {
		t.Fatalf("Always: %v, %v; want %s", got, err, secondDigest)
	}
	if content, _ := os.ReadFile(filepath.Join(got.Rootfs, "app")); string(content) != "v2" {
		t.Errorf("Always: app holds %q, want v2", content)
	}
	if got, err := s.Get(ref, corev1.PullNever); err != nil || got.Digest != secondDigest {
		t.Errorf("Never after a pull: %v, %v; want %s", got, err, secondDigest)
	}
	if _, err := s.Get(host+"/other:1.0", corev1.PullNever); !errors.Is(err, ErrNeverPull) {
		t.Errorf("Never, not present: %v, want ErrNeverPull", err)
	}
}
