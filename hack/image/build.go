package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// platform is a target the image is built for.
type platform struct{ OS, Arch string }

func (p platform) String() string  { return p.OS + "/" + p.Arch }
func (p platform) dirName() string { return p.OS + "-" + p.Arch }

// entrypoint is the command the image runs unless told otherwise.
const entrypoint = "clusterprofile-manager"

// binaries are one platform's programs: the bundle's commands and cp.
type binaries struct {
	dir      string   // holds the commands
	commands []string // file names in dir, one per cmd/ package
	cp       string   // u-root's cp
}

// paths lists every binary, commands first.
func (b binaries) paths() []string {
	var paths []string
	for _, c := range b.commands {
		paths = append(paths, filepath.Join(b.dir, c))
	}
	return append(paths, b.cp)
}

// buildPlatform cross-compiles every command under cmd/ and cp, static
// (CGO off), with -trimpath and stripped.
func buildPlatform(o *options, p platform) (binaries, error) {
	dir := filepath.Join(o.work, p.dirName())
	b := binaries{dir: filepath.Join(dir, "root"), cp: filepath.Join(dir, "cp")}
	// Start empty so a removed command does not linger in the image.
	if err := os.RemoveAll(b.dir); err != nil {
		return b, err
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return b, err
	}
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	if err := goBuild(o.src, env, "-ldflags=-s -w "+o.ldflags, "-o", b.dir+string(filepath.Separator), "./cmd/..."); err != nil {
		return b, fmt.Errorf("building the commands for %s: %w", p, err)
	}
	// cp is a tool of this module, pinned in its go.mod.
	if err := goBuild(filepath.Join(o.src, "hack", "image"), env, "-ldflags=-s -w", "-o", b.cp, "github.com/u-root/u-root/cmds/core/cp"); err != nil {
		return b, fmt.Errorf("building cp for %s: %w", p, err)
	}
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return b, err
	}
	for _, e := range entries {
		b.commands = append(b.commands, e.Name())
	}
	sort.Strings(b.commands)
	return b, nil
}

func goBuild(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-trimpath"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, os.Stderr, os.Stderr
	return cmd.Run()
}
