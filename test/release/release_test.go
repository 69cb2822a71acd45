package release_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"
)

// TestReleaseArtefacts: the plugins for every platform (static ELF on
// Linux, Mach-O for the right CPU on macOS), the chart archive at VERSION,
// the SBOMs, and SHA256SUMS naming exactly those files with their digests.
func TestReleaseArtefacts(t *testing.T) {
	var want []string
	for _, p := range []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"} {
		for _, c := range []string{"cp-creds", "kubectl-clusterprofile"} {
			want = append(want, c+"-"+p)
			checkPlugin(t, c+"-"+p)
		}
	}
	chartFile := "clusterprofile-manager-" + version + ".tgz"
	want = append(want, chartFile, "sbom-linux-amd64.spdx.json", "sbom-linux-arm64.spdx.json", "clusterprofile.yaml")
	for _, p := range []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"} {
		want = append(want, "kubectl-clusterprofile-"+p+".tar.gz")
	}
	c, err := loader.Load(filepath.Join(releaseDir, chartFile))
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != version || c.Metadata.AppVersion != version {
		t.Errorf("the chart archive has version %s and appVersion %s, want %s", c.Metadata.Version, c.Metadata.AppVersion, version)
	}
	sums := checksums(t)
	if diff := slices.Compare(slices.Sorted(slices.Values(want)), slices.Sorted(maps.Keys(sums))); diff != 0 {
		t.Errorf("SHA256SUMS names %v, want %v", slices.Sorted(maps.Keys(sums)), slices.Sorted(slices.Values(want)))
	}
	for name, sum := range sums {
		b, err := os.ReadFile(filepath.Join(releaseDir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: SHA256SUMS says %s, the file is %x", name, sum, got)
		}
	}
}

func checkPlugin(t *testing.T, name string) {
	path := filepath.Join(releaseDir, name)
	goos, arch, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(name, "cp-creds-"), "kubectl-clusterprofile-"), "-")
	if goos == "darwin" {
		f, err := macho.Open(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		defer func() { _ = f.Close() }()
		if want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[arch]; f.Cpu != want {
			t.Errorf("%s is for %s, want %s", name, f.Cpu, want)
		}
		return
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	defer func() { _ = f.Close() }()
	if f.Machine != elfMachine[arch] {
		t.Errorf("%s is for %s, want %s", name, f.Machine, elfMachine[arch])
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an interpreter: dynamically linked", name)
		}
	}
}

// checksums reads SHA256SUMS: file name to hex digest.
func checksums(t *testing.T) map[string]string {
	f, err := os.Open(filepath.Join(releaseDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sums := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not sha256sum's", s.Text())
		}
		sums[name] = sum
	}
	return sums
}

// TestKrewManifest: clusterprofile.yaml is a krew plugin manifest for
// VERSION whose every platform names its release archive by URL and
// SHA-256, and each archive holds the platform's binary as
// kubectl-clusterprofile, executable, which is what kubectl finds on PATH
// after krew unpacks it.
func TestKrewManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(releaseDir, "clusterprofile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		APIVersion, Kind string
		Metadata         struct{ Name string }
		Spec             struct {
			Version   string
			Platforms []struct {
				Selector         struct{ MatchLabels map[string]string }
				URI, SHA256, Bin string
			}
		}
	}
	if err := yaml.Unmarshal(data, &manifest); err != nil {
		t.Fatalf("clusterprofile.yaml: %v", err)
	}
	if manifest.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || manifest.Kind != "Plugin" ||
		manifest.Metadata.Name != "clusterprofile" || manifest.Spec.Version != "v"+version {
		t.Errorf("manifest head %s %s %s %s, want a krew Plugin clusterprofile at v%s",
			manifest.APIVersion, manifest.Kind, manifest.Metadata.Name, manifest.Spec.Version, version)
	}
	var platforms []string
	for _, p := range manifest.Spec.Platforms {
		platform := p.Selector.MatchLabels["os"] + "-" + p.Selector.MatchLabels["arch"]
		platforms = append(platforms, platform)
		archive := "kubectl-clusterprofile-" + platform + ".tar.gz"
		if want := "https://github.com/open-cluster-management-io/clusterprofile-bundle/releases/download/v" + version + "/" + archive; p.URI != want {
			t.Errorf("%s: uri %s, want %s", platform, p.URI, want)
		}
		b, err := os.ReadFile(filepath.Join(releaseDir, archive))
		if err != nil {
			t.Error(err)
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != p.SHA256 || p.Bin != "kubectl-clusterprofile" {
			t.Errorf("%s: sha256 %s and bin %s, want %x and kubectl-clusterprofile", platform, p.SHA256, p.Bin, sum)
		}
		binary, mode := unpack(t, b, "kubectl-clusterprofile")
		raw, err := os.ReadFile(filepath.Join(releaseDir, "kubectl-clusterprofile-"+platform))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(binary, raw) || mode&0o111 == 0 {
			t.Errorf("%s: the archive's kubectl-clusterprofile (mode %o) is not the release's executable binary", platform, mode)
		}
	}
	sort.Strings(platforms)
	if want := []string{"darwin-amd64", "darwin-arm64", "linux-amd64", "linux-arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}
}

// unpack returns the named file of a gzipped tar and its mode.
func unpack(t *testing.T, archive []byte, name string) ([]byte, int64) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no %s in the archive: %v", name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b, h.Mode
		}
	}
}
