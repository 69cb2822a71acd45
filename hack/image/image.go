package main

import (
	"fmt"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's title, in its labels and the SBOMs.
const title = "clusterprofile-bundle"

// annotations are the OCI labels of the image's config, and the annotations
// of its manifests and index.
func annotations(o *options) map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": "ClusterProfile bundle for Open Cluster Management: hub manager, agent, cp-creds, kubectl plugin",
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.revision":    o.revision,
		"org.opencontainers.image.created":     o.created.UTC().Format("2006-01-02T15:04:05Z"),
		"org.opencontainers.image.licenses":    o.licenses,
	}
	if o.source != "" {
		a["org.opencontainers.image.source"] = o.source
	}
	return a
}

// platformImage is one platform's image: a base layer (accounts, CA
// bundle, /bin/cp, /tmp) and a layer of the commands, on nothing.
func platformImage(o *options, p platform, b binaries) (v1.Image, error) {
	dir := filepath.Dir(b.dir)
	layers := map[string][]entry{"base": baseEntries(o, b.cp), "commands": commandEntries(b)}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, name := range []string{"base", "commands"} {
		path := filepath.Join(dir, name+".tar")
		if err := writeTar(path, layers[name], o.created); err != nil {
			return nil, fmt.Errorf("writing the %s layer of %s: %w", name, p, err)
		}
		layer, err := tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
			Created: v1.Time{Time: o.created}, CreatedBy: "make image: " + name, Comment: "hack/image",
		}})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = p.OS, p.Arch, v1.Time{Time: o.created}
	cf.Config = v1.Config{
		User:       imageUser,
		Entrypoint: []string{"/" + entrypoint},
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/" + caBundleDst},
		Labels:     annotations(o),
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, annotations(o)).(v1.Image), nil
}

// imageIndex puts the platforms' images in one OCI index.
func imageIndex(o *options, images map[platform]v1.Image) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.platforms {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        images[p],
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	return mutate.Annotations(idx, annotations(o)).(v1.ImageIndex)
}
