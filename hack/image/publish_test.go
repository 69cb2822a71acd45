package main

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushWritesTheIndexAndItsSBOMs: what `make image PUSH=` pushes (push)
// lands in a registry as a user pulls it: the tag names the index, and
// each platform's manifest has its SBOM as a referrer of artifact type
// SPDX whose one layer is the document.
func TestPushWritesTheIndexAndItsSBOMs(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	o := &options{
		version: "0.1.0", revision: "abc", created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), licenses: "Apache-2.0",
		platforms: []platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}},
		push:      strings.TrimPrefix(srv.URL, "http://") + "/clusterprofile-bundle:0.1.0",
	}
	images := map[platform]v1.Image{}
	var refs []referrer
	for _, p := range o.platforms {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		images[p] = img
		r, err := newReferrer(o, p, img, []byte(`{"spdxVersion":"SPDX-2.3","name":"`+p.String()+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	idx := imageIndex(o, images)
	if err := push(o, idx, refs); err != nil {
		t.Fatal(err)
	}

	ref, err := name.ParseReference(o.push)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	want, _ := idx.Digest()
	if got, _ := pulled.Digest(); got != want {
		t.Errorf("%s is %s, want the index %s", ref, got, want)
	}
	for i, p := range o.platforms {
		digest, _ := images[p].Digest()
		found, err := remote.Referrers(ref.Context().Digest(digest.String()))
		if err != nil {
			t.Fatalf("referrers of %s: %v", p, err)
		}
		m, err := found.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Manifests) != 1 {
			t.Fatalf("referrers of %s: %+v, want one, the SBOM", p, m.Manifests)
		}
		// The manifest itself: pkg/registry lists a referrer's config media
		// type as its artifact type, where the OCI spec takes the manifest's.
		sbom, err := remote.Image(ref.Context().Digest(m.Manifests[0].Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		sm, err := sbom.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if sm.ArtifactType != spdxMediaType || sm.Subject == nil || sm.Subject.Digest != digest {
			t.Errorf("the referrer of %s has artifact type %q and subject %v, want %q and %s", p, sm.ArtifactType, sm.Subject, spdxMediaType, digest)
		}
		layers, err := sbom.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("the SBOM of %s has layers %v (%v), want one", p, layers, err)
		}
		rc, err := layers[0].Compressed()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, refs[i].sbom) {
			t.Errorf("the SBOM of %s reads %s, want %s", p, got, refs[i].sbom)
		}
	}
}
