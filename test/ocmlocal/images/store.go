//go:build linux

// Package images is the node side of container images in the harness: a
// store that pulls images from the local registry for this machine's
// platform with a container's pull policy and unpacks each once, and what
// a container runtime derives from an image (runtime.go): the command
// line, the environment and the user a container of it runs with.
package images

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
)

// Image is an image pulled for this machine's platform and unpacked: its
// root file system and its configuration.
type Image struct {
	// Digest is the platform manifest's digest.
	Digest v1.Hash
	Rootfs string
	Config v1.Config
}

// Store pulls images by reference and unpacks each once: references
// resolve to a platform manifest's digest (kept for IfNotPresent), and
// root file systems are kept by that digest, under dir.
type Store struct {
	dir string

	mu       sync.Mutex
	byRef    map[string]v1.Hash
	unpacked map[v1.Hash]*Image
	// resolved counts the references resolved at the registry, for tests.
	resolved int
}

// NewStore is a store that keeps its root file systems under dir.
func NewStore(dir string) *Store {
	return &Store{dir: dir, byRef: map[string]v1.Hash{}, unpacked: map[v1.Hash]*Image{}}
}

// ErrNeverPull is returned for imagePullPolicy Never and an image not present.
var ErrNeverPull = errors.New("image not present and imagePullPolicy is Never")

// Get returns the image a container names, as a kubelet would: with
// IfNotPresent (the default for a tag other than latest) an image this
// store already resolved the reference to is used without asking the
// registry; Always resolves the reference at the registry every time (a
// new digest is pulled and unpacked, a known one reused); Never uses only
// what is present.
func (s *Store) Get(image string, policy corev1.PullPolicy) (*Image, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, fmt.Errorf("image %q: %w", image, err)
	}
	if policy == "" {
		policy = defaultPullPolicy(ref)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if policy != corev1.PullAlways {
		if d, ok := s.byRef[ref.Name()]; ok {
			return s.unpacked[d], nil
		}
		if policy == corev1.PullNever {
			return nil, fmt.Errorf("%s: %w", image, ErrNeverPull)
		}
	}
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	s.resolved++
	img, err := remote.Image(ref, remote.WithPlatform(platform))
	if err != nil {
		return nil, fmt.Errorf("pulling %s for %s: %w", image, platform, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	u, ok := s.unpacked[digest]
	if !ok {
		if u, err = s.unpack(img, digest); err != nil {
			return nil, fmt.Errorf("unpacking %s@%s: %w", image, digest, err)
		}
		s.unpacked[digest] = u
	}
	s.byRef[ref.Name()] = digest
	return u, nil
}

// defaultPullPolicy is the API server's default: Always for latest or no
// tag, else IfNotPresent.
func defaultPullPolicy(ref name.Reference) corev1.PullPolicy {
	if t, ok := ref.(name.Tag); ok && t.TagStr() == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// unpack writes the image's flattened file system (mutate.Extract: the
// layers in order, whiteouts applied) into a directory named after the
// digest, through a temporary one so that a failed unpack leaves nothing.
func (s *Store) unpack(img v1.Image, digest v1.Hash) (*Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	final := filepath.Join(s.dir, digest.Algorithm+"-"+digest.Hex)
	tmp := final + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untar(tar.NewReader(rc), tmp); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(final); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	return &Image{Digest: digest, Rootfs: final, Config: cf.Config}, nil
}

// untar writes a file system from a tar stream under root: directories,
// regular files, symbolic and hard links, with their modes and owners (the
// harness runs as root). Names and links are resolved inside root.
func untar(tr *tar.Reader, root string) error {
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		if name == "" {
			continue
		}
		parent, err := securejoin.SecureJoin(root, filepath.Dir(name))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
		path := filepath.Join(parent, filepath.Base(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(path, 0o755); err != nil && !os.IsExist(err) {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(path, tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.Remove(path)
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		case tar.TypeLink:
			target, err := securejoin.SecureJoin(root, h.Linkname)
			if err != nil {
				return err
			}
			_ = os.Remove(path)
			if err := os.Link(target, path); err != nil {
				return err
			}
		default:
			// Devices and fifos: a container runtime would create them; the
			// images run here have none.
			continue
		}
		if err := os.Lchown(path, h.Uid, h.Gid); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeSymlink {
			// After chown, which clears set-user-ID bits.
			if err := os.Chmod(path, h.FileInfo().Mode()); err != nil {
				return err
			}
		}
	}
}

func writeFile(path string, r io.Reader) error {
	_ = os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
