package release_test

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
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
	want = append(want, chartFile, "sbom-linux-amd64.spdx.json", "sbom-linux-arm64.spdx.json")
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
