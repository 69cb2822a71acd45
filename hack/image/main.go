// Command image builds the bundle's multi-arch OCI image without a Docker
// engine or a base image: every command under cmd/ at the image root (the
// manager the entrypoint), u-root's static cp as /bin/cp, the build
// machine's CA bundle and the nonroot user (65532) in /etc/passwd and
// /etc/group, all from empty.Image with go-containerregistry. It writes an
// OCI image layout whose index.json names the image index (tagged with the
// version) and one SPDX SBOM per platform, attached to that platform's
// manifest as an OCI 1.1 referrer; with -push it also pushes both to a
// registry. `make image` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// options are the command line: what to build, how it is stamped, where it goes.
type options struct {
	src       string // the bundle's repository root
	out       string // the OCI image layout directory (replaced)
	work      string // where the binaries are built
	sbomDir   string // optional: the SBOMs also as files here
	version   string
	revision  string
	created   time.Time
	ldflags   string // the Makefile's -X stamps
	source    string
	licenses  string
	caBundle  string
	push      string
	platforms []platform
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.src, "src", "../..", "The bundle's repository root.")
	fs.StringVar(&o.out, "out", "../../bin/image", "OCI image layout directory to write (replaced).")
	fs.StringVar(&o.work, "work", "../../bin/image-build", "Directory the binaries are built in, one subdirectory per platform.")
	fs.StringVar(&o.sbomDir, "sbom-dir", "", "Also write each platform's SPDX SBOM here as sbom-<os>-<arch>.spdx.json.")
	fs.StringVar(&o.version, "version", "", "Version (the VERSION file): the index's tag in the layout and the version label.")
	fs.StringVar(&o.revision, "revision", "", "Git revision for the revision label.")
	created := fs.String("created", "", "Creation time (RFC 3339) of the image, its files and its SBOMs.")
	fs.StringVar(&o.ldflags, "ldflags", "", "Extra -ldflags for the bundle's binaries (the Makefile's version stamps).")
	fs.StringVar(&o.source, "source", "", "Source repository URL for the source label.")
	fs.StringVar(&o.licenses, "licenses", "Apache-2.0", "SPDX license expression for the licenses label.")
	fs.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle installed at /etc/ssl/certs/ca-certificates.crt.")
	fs.StringVar(&o.push, "push", "", "Also push the index and its SBOMs to this reference (registry/repository:tag).")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Comma-separated os/arch list.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.version == "" || o.revision == "" || *created == "" {
		return nil, fmt.Errorf("-version, -revision and -created are required")
	}
	var err error
	if o.created, err = time.Parse(time.RFC3339, *created); err != nil {
		return nil, fmt.Errorf("-created: %w", err)
	}
	for _, p := range strings.Split(*platforms, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || os != "linux" {
			return nil, fmt.Errorf("-platforms: %q is not linux/<arch>", p)
		}
		o.platforms = append(o.platforms, platform{OS: os, Arch: arch})
	}
	return o, nil
}
