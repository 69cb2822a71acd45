// Package release_test checks what `make release-dry-run` builds into
// bin/release — what the release workflow publishes — without a network:
// the image layout's structure per platform, the plugin binaries for every
// platform, the chart archive and the checksums. The artefacts are built
// once per run (the Go build cache keeps a rebuild to the links); -short
// skips the package.
package release_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var (
	releaseDir string
	version    string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipping: make release-dry-run cross-compiles for minutes")
		os.Exit(0)
	}
	root := framework.RepoRoot()
	b, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	version = strings.TrimSpace(string(b))
	releaseDir = filepath.Join(root, "bin", "release")
	build := exec.Command("make", "-s", "-C", root, "release-dry-run", "RELEASE_DIR="+releaseDir)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "make release-dry-run:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
