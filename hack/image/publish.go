package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// referrer is an SBOM attached to one platform's manifest: an OCI 1.1
// artifact manifest (empty config, the SPDX document as its one layer,
// that manifest as its subject).
type referrer struct {
	platform platform
	sbom     []byte
	manifest []byte
}

// emptyJSON is the OCI empty descriptor's content.
var emptyJSON = []byte("{}")

func (r referrer) RawManifest() ([]byte, error)        { return r.manifest, nil }
func (r referrer) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (r referrer) descriptor() v1.Descriptor {
	d, s, _ := v1.SHA256(bytes.NewReader(r.manifest))
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: s, ArtifactType: spdxMediaType}
}

func newReferrer(o *options, p platform, img v1.Image, sbom []byte) (referrer, error) {
	subject, err := descriptorOf(img)
	if err != nil {
		return referrer{}, err
	}
	blob := func(mt types.MediaType, b []byte) v1.Descriptor {
		d, s, _ := v1.SHA256(bytes.NewReader(b))
		return v1.Descriptor{MediaType: mt, Digest: d, Size: s}
	}
	layer := blob(spdxMediaType, sbom)
	layer.Annotations = map[string]string{"org.opencontainers.image.title": sbomFileName(p)}
	m := v1.Manifest{
		SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: spdxMediaType,
		Config:      blob(types.OCIEmptyJSON, emptyJSON),
		Layers:      []v1.Descriptor{layer},
		Subject:     &subject,
		Annotations: map[string]string{"org.opencontainers.image.created": annotations(o)["org.opencontainers.image.created"]},
	}
	raw, err := json.Marshal(m)
	return referrer{platform: p, sbom: sbom, manifest: raw}, err
}

func sbomFileName(p platform) string { return "sbom-" + p.dirName() + ".spdx.json" }

func descriptorOf(img v1.Image) (v1.Descriptor, error) {
	d, err := img.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	s, err := img.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := img.MediaType()
	return v1.Descriptor{MediaType: mt, Digest: d, Size: s}, err
}

// writeLayout replaces o.out with an OCI layout holding the index (its
// ref.name the version) and the SBOM referrers.
func writeLayout(o *options, idx v1.ImageIndex, refs []referrer) error {
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	l, err := layout.Write(o.out, empty.Index)
	if err != nil {
		return err
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.version})); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	for _, r := range refs {
		for _, b := range [][]byte{emptyJSON, r.sbom, r.manifest} {
			d, _, _ := v1.SHA256(bytes.NewReader(b))
			if err := l.WriteBlob(d, io.NopCloser(bytes.NewReader(b))); err != nil {
				return err
			}
		}
		if err := l.AppendDescriptor(r.descriptor()); err != nil {
			return err
		}
		if o.sbomDir != "" {
			if err := os.WriteFile(filepath.Join(o.sbomDir, sbomFileName(r.platform)), r.sbom, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// push writes the index to o.push and each SBOM as a referrer of its
// platform's manifest (through the Referrers API, or its tag schema where
// the registry has none), with the credentials of ~/.docker/config.json.
func push(o *options, idx v1.ImageIndex, refs []referrer) error {
	ref, err := name.ParseReference(o.push)
	if err != nil {
		return err
	}
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	if err := remote.WriteIndex(ref, idx, auth); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	for _, r := range refs {
		for _, l := range []v1.Layer{static.NewLayer(emptyJSON, types.OCIEmptyJSON), static.NewLayer(r.sbom, spdxMediaType)} {
			if err := remote.WriteLayer(ref.Context(), l, auth); err != nil {
				return fmt.Errorf("pushing the SBOM of %s: %w", r.platform, err)
			}
		}
		if err := remote.Put(ref.Context().Digest(r.descriptor().Digest.String()), r, auth); err != nil {
			return fmt.Errorf("pushing the SBOM manifest of %s: %w", r.platform, err)
		}
	}
	return nil
}
