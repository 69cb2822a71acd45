package main

import (
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// run builds every platform's image and SBOM, writes the layout and pushes.
func run(o *options) error {
	for _, dir := range []*string{&o.src, &o.out, &o.work} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return err
		}
		*dir = abs
	}
	if _, err := os.Stat(o.caBundle); err != nil {
		return fmt.Errorf("the CA bundle (Debian's ca-certificates; -ca-bundle): %w", err)
	}
	images := map[platform]v1.Image{}
	var refs []referrer
	for _, p := range o.platforms {
		fmt.Fprintf(os.Stderr, "image: building %s\n", p)
		b, err := buildPlatform(o, p)
		if err != nil {
			return err
		}
		if images[p], err = platformImage(o, p, b); err != nil {
			return err
		}
		doc, err := sbom(o, p, b)
		if err != nil {
			return err
		}
		r, err := newReferrer(o, p, images[p], doc)
		if err != nil {
			return err
		}
		refs = append(refs, r)
	}
	idx := imageIndex(o, images)
	if err := writeLayout(o, idx, refs); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "image: wrote %s (index %s, tag %s)\n", o.out, digest, o.version)
	if o.push == "" {
		return nil
	}
	if err := push(o, idx, refs); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "image: pushed %s@%s\n", o.push, digest)
	return nil
}
