package release_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The parts of the OCI image spec the tests read, without an image library.
type (
	descriptor struct {
		MediaType    string            `json:"mediaType"`
		Digest       string            `json:"digest"`
		Size         int64             `json:"size"`
		ArtifactType string            `json:"artifactType"`
		Annotations  map[string]string `json:"annotations"`
		Platform     *struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	}
	// manifest is an index or an image manifest.
	manifest struct {
		MediaType    string       `json:"mediaType"`
		ArtifactType string       `json:"artifactType"`
		Manifests    []descriptor `json:"manifests"`
		Config       descriptor   `json:"config"`
		Layers       []descriptor `json:"layers"`
		Subject      *descriptor  `json:"subject"`
	}
	imageConfig struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Config       struct {
			User       string            `json:"User"`
			Entrypoint []string          `json:"Entrypoint"`
			Env        []string          `json:"Env"`
			Labels     map[string]string `json:"Labels"`
		} `json:"config"`
	}
)

// blob reads a blob of the layout at dir.
func blob(t *testing.T, dir, digest string) []byte {
	t.Helper()
	algo, hex, _ := strings.Cut(digest, ":")
	b, err := os.ReadFile(filepath.Join(dir, "blobs", algo, hex))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// walkLayers calls fn on every entry of the image's layers, in order, with
// a reader of its content.
func walkLayers(t *testing.T, dir string, m manifest, fn func(h *tar.Header, r io.Reader)) {
	t.Helper()
	for _, l := range m.Layers {
		f, err := os.Open(filepath.Join(dir, "blobs", strings.Replace(l.Digest, ":", "/", 1)))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			fn(h, tr)
		}
		_ = f.Close()
	}
}
