//go:build linux

// Package demo_test types the README's `make demo` in a copy of the working
// tree, as a user on a fresh clone would, and checks that the tour runs to
// its end: every step shown, and cluster1's node counted in its profile
// within KEP-4322's 30 s of registering. The copy has its own bin/, so the
// demo's builds never touch the binaries other suites run.
package demo_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// steps is how many steps the demo announces ("==> "): starting OCM, the
// clusters, the install, the fleet, and the tour's nine.
const steps = 12

// factDeadline is how soon after registering cluster1's node its profile
// must count it. The node registers a moment after the agent's first report,
// which the agent and then the mirror published at once; the joining node,
// a significant change, goes out on each one's publication of slack, so it
// takes only its way there: the agent's claim on cluster1, the klusterlet's
// copy into the ManagedCluster, the mirror's write, a few seconds under CI's
// load. A budget without slack holds it for up to an interval at each;
// one that held every change for facts.refresh, minutes.
const factDeadline = 30 * time.Second

var nodeLag = regexp.MustCompile(`cluster1's node registered at \S+; its profile counts it \(\S+=1\) (\S+) later`)

func TestMakeDemoAsTheREADMESays(t *testing.T) {
	if reason := whyNot(); reason != "" {
		if os.Getenv("CI") != "" && !testing.Short() && os.Geteuid() == 0 {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	root := ocmlocal.RepoRoot()
	block, err := docsrun.Find(root, docsrun.Demo)
	if err != nil {
		t.Fatal(err)
	}
	tree := copyWorkingTree(t, root)
	var out strings.Builder
	for _, command := range block.Commands() {
		if typed, why := docsrun.Typed(command); !typed {
			t.Logf("README.md:%d: not typed: %s: %s", block.Line, command, why)
			continue
		}
		printed, err := typeInto(tree, command)
		out.WriteString(printed)
		if err != nil {
			t.Fatalf("README.md:%d: %s: %v\n%s", block.Line, command, err, tail(printed, 60))
		}
	}
	printed := out.String()
	if got := strings.Count(printed, "\n==> "); got != steps {
		t.Errorf("the demo announced %d steps, want %d:\n%s", got, steps, tail(printed, 60))
	}
	if !strings.Contains(printed, "The demo took") {
		t.Errorf("the demo did not reach its end:\n%s", tail(printed, 60))
	}
	m := nodeLag.FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("the demo printed no node lag for cluster1:\n%s", tail(printed, 60))
	}
	lag, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("node lag %q: %v", m[1], err)
	}
	t.Logf("cluster1's profile counted its node %s after it registered", lag)
	if lag > factDeadline {
		t.Errorf("cluster1's profile counted its node %s after it registered, past KEP-4322's %s", lag, factDeadline)
	}
}

// whyNot says why make demo cannot run here, or "".
func whyNot() string {
	switch {
	case testing.Short():
		return "make demo skipped in -short mode"
	case os.Geteuid() != 0:
		return "make demo needs root (the local OCM's pod sandboxes use mount and network namespaces)"
	}
	for _, tool := range []string{"make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("make demo needs %s: %v", tool, err)
		}
	}
	return ""
}

// copyWorkingTree copies the files git knows of (tracked, and untracked
// but not ignored) into a new directory: the working tree as a fresh clone
// with these edits would have it, without bin/.
func copyWorkingTree(t *testing.T, root string) string {
	t.Helper()
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("listing the working tree: %v", err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if err := copyFile(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(from, to string) error {
	info, err := os.Lstat(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil // deleted in the working tree
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// typeInto runs command with bash in dir as a user's shell would: the
// environment of this test without what an enclosing make passes down.
func typeInto(dir, command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", command)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "KUBEBUILDER_ASSETS", "OCM_BIN_DIR", "OCM_VERSION":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tail is the last n lines of text.
func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
