package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBuildIsStatic builds cp-creds the way `make build` does and checks the
// binary needs no dynamic loader or shared library (consumers copy it into
// distroless images, which have no libc) and that it is stamped with VERSION
// and the git revision.
func TestBuildIsStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks an ELF binary")
	}
	makeTool, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make not found")
	}
	bin := t.TempDir()
	build := exec.Command(makeTool, "-s", "-C", filepath.Join("..", ".."), "cp-creds", "BIN="+bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make cp-creds: %v\n%s", err, out)
	}
	f, err := elf.Open(filepath.Join(bin, "cp-creds"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()

	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %s program header: it is dynamically linked", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}

	version, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "cp-creds"), "--version").Output()
	if err != nil {
		t.Fatalf("cp-creds --version: %v", err)
	}
	want := "cp-creds version " + strings.TrimSpace(string(version)) + " (revision "
	if !strings.HasPrefix(string(out), want) || strings.Contains(string(out), "revision unknown") {
		t.Errorf("cp-creds --version printed %q, want %q followed by the git revision", out, want)
	}
}
