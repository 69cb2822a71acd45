package release_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// elfMachine is the ELF machine of each architecture the image is built for.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// commands are the image's binaries at its root: one per cmd/ directory.
func commands(t *testing.T) []string {
	entries, err := os.ReadDir(filepath.Join(framework.RepoRoot(), "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestImageStructure: for each platform of the index, what a Deployment,
// the addon and a consumer's initContainer rely on.
func TestImageStructure(t *testing.T) {
	dir := filepath.Join(releaseDir, "image")
	var top manifest
	decode(t, must(os.ReadFile(filepath.Join(dir, "index.json"))), &top)
	var index manifest
	for _, d := range top.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == version {
			decode(t, blob(t, dir, d.Digest), &index)
		}
	}
	var platforms []string
	for _, d := range index.Manifests {
		p := d.Platform.OS + "/" + d.Platform.Architecture
		platforms = append(platforms, p)
		t.Run(p, func(t *testing.T) {
			var m manifest
			decode(t, blob(t, dir, d.Digest), &m)
			checkConfig(t, dir, m, d.Platform.Architecture)
			checkFiles(t, dir, m, d.Platform.Architecture)
			checkSBOM(t, dir, top, d.Digest)
		})
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the index tagged %s has platforms %v, want %v", version, platforms, want)
	}
}

func checkConfig(t *testing.T, dir string, m manifest, arch string) {
	var c imageConfig
	decode(t, blob(t, dir, m.Config.Digest), &c)
	if c.OS != "linux" || c.Architecture != arch {
		t.Errorf("config is for %s/%s, want linux/%s", c.OS, c.Architecture, arch)
	}
	if c.Config.User != "65532:65532" {
		t.Errorf("User = %q, want the numeric non-root 65532:65532", c.Config.User)
	}
	if want := []string{"/clusterprofile-manager"}; !slices.Equal(c.Config.Entrypoint, want) {
		t.Errorf("Entrypoint = %q, want %q", c.Config.Entrypoint, want)
	}
	if !slices.Contains(c.Config.Env, "PATH=/usr/local/bin:/usr/bin:/bin") {
		t.Errorf("Env %q has no PATH with /bin, where cp is", c.Config.Env)
	}
	for _, l := range []string{"source", "version", "revision", "created", "title", "licenses"} {
		if c.Config.Labels["org.opencontainers.image."+l] == "" {
			t.Errorf("label org.opencontainers.image.%s is not set", l)
		}
	}
	if got := c.Config.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("version label %q, want %q", got, version)
	}
}

func checkFiles(t *testing.T, dir string, m manifest, arch string) {
	static := map[string]bool{"bin/cp": true}
	for _, c := range commands(t) {
		static[c] = true
	}
	found := map[string]bool{}
	walkLayers(t, dir, m, func(h *tar.Header, r io.Reader) {
		name := strings.TrimPrefix(h.Name, "./")
		switch {
		case static[name]:
			found[name] = true
			if h.Mode&0o111 == 0 || h.Uid != 0 {
				t.Errorf("/%s: mode %o owner %d, want executable and root-owned", name, h.Mode, h.Uid)
			}
			checkStaticELF(t, name, must(io.ReadAll(r)), arch)
		case name == "etc/passwd":
			found[name] = strings.Contains(string(must(io.ReadAll(r))), "\nnonroot:x:65532:65532:")
		case name == "etc/group":
			found[name] = strings.Contains(string(must(io.ReadAll(r))), "\nnonroot:x:65532:")
		case name == "etc/ssl/certs/ca-certificates.crt":
			found[name] = bytes.Contains(must(io.ReadAll(r)), []byte("BEGIN CERTIFICATE"))
		}
	})
	for _, want := range append(slices.Sorted(maps.Keys(static)), "etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt") {
		if !found[want] {
			t.Errorf("/%s is missing (or, for /etc, lacks the nonroot entry or certificates)", want)
		}
	}
}

// checkStaticELF: no interpreter, so the binary runs in an image without libc.
func checkStaticELF(t *testing.T, name string, b []byte, arch string) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Errorf("/%s: %v", name, err)
		return
	}
	if f.Machine != elfMachine[arch] {
		t.Errorf("/%s is for %s, want %s (%s)", name, f.Machine, elfMachine[arch], arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/%s has a %s program header: dynamically linked", name, p.Type)
		}
	}
	if f.Section(".interp") != nil {
		t.Errorf("/%s has an .interp section", name)
	}
	if name == "cp-creds" && arch == runtime.GOARCH && runtime.GOOS == "linux" {
		checkVersion(t, name, b)
	}
}

// checkVersion runs the host's copy of a binary with --version: stamped with VERSION.
func checkVersion(t *testing.T, name string, b []byte) {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "--version").Output()
	if want := fmt.Sprintf("%s version %s (revision ", name, version); err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("/%s --version = %q (%v), want %q…", name, out, err, want)
	}
}

// checkSBOM: an SPDX document attached to the platform's manifest, listing
// the bundle's module and u-root's (cp).
func checkSBOM(t *testing.T, dir string, top manifest, subject string) {
	var sboms int
	for _, d := range top.Manifests {
		var m manifest
		decode(t, blob(t, dir, d.Digest), &m)
		if m.Subject == nil || m.Subject.Digest != subject || m.ArtifactType != "application/spdx+json" {
			continue
		}
		sboms++
		var doc struct {
			SPDXVersion string `json:"spdxVersion"`
			Packages    []struct {
				Name    string `json:"name"`
				Version string `json:"versionInfo"`
			} `json:"packages"`
		}
		decode(t, blob(t, dir, m.Layers[0].Digest), &doc)
		var names []string
		for _, p := range doc.Packages {
			names = append(names, p.Name+"@"+p.Version)
		}
		for _, want := range []string{"open-cluster-management.io/clusterprofile-bundle@" + version, "github.com/u-root/u-root@v0.15.0", "/cp-creds@" + version} {
			if doc.SPDXVersion != "SPDX-2.3" || !slices.Contains(names, want) {
				t.Errorf("the SBOM (%s) has no package %s", doc.SPDXVersion, want)
			}
		}
	}
	if sboms != 1 {
		t.Errorf("%d SPDX referrers of %s, want 1", sboms, subject)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
