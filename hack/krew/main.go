// Command krew packs the release's kubectl-clusterprofile binaries as krew
// installs plugins: one kubectl-clusterprofile-<os>-<arch>.tar.gz per
// platform holding the binary as kubectl-clusterprofile (the name kubectl
// looks for on PATH), and clusterprofile.yaml, the krew plugin manifest
// naming each archive's release URL and SHA-256. `make release-dry-run`
// runs it on bin/release.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	plugin = "kubectl-clusterprofile"
	// ManifestName is the krew manifest's file: krew names a plugin's
	// manifest after the plugin (kubectl clusterprofile).
	ManifestName = "clusterprofile.yaml"
)

func main() {
	dir := flag.String("dir", "bin/release", "The release directory holding kubectl-clusterprofile-<os>-<arch>.")
	version := flag.String("version", "", "The release's VERSION.")
	source := flag.String("source", "", "The repository's URL (https://github.com/<owner>/<name>), whose releases hold the archives.")
	flag.Parse()
	if err := pack(*dir, *version, *source); err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
}

func pack(dir, version, source string) error {
	binaries, err := filepath.Glob(filepath.Join(dir, plugin+"-*-*"))
	if err != nil {
		return err
	}
	var platforms []Platform
	for _, path := range binaries {
		name := filepath.Base(path)
		if strings.HasSuffix(name, ".tar.gz") {
			continue
		}
		goos, arch, _ := strings.Cut(strings.TrimPrefix(name, plugin+"-"), "-")
		archive := name + ".tar.gz"
		sum, err := writeArchive(path, filepath.Join(dir, archive))
		if err != nil {
			return err
		}
		platforms = append(platforms, Platform{
			Selector: Selector{MatchLabels: map[string]string{"os": goos, "arch": arch}},
			URI:      fmt.Sprintf("%s/releases/download/v%s/%s", source, version, archive),
			SHA256:   sum, Bin: plugin,
		})
	}
	if len(platforms) == 0 {
		return fmt.Errorf("no %s-<os>-<arch> in %s", plugin, dir)
	}
	sort.Slice(platforms, func(i, j int) bool { return platforms[i].URI < platforms[j].URI })
	manifest, err := yaml.Marshal(Manifest(version, source, platforms))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestName), manifest, 0o644)
}

// writeArchive writes the binary at path into a gzipped tar as plugin,
// reproducibly (no times, owners or modes but 0755), and returns the
// archive's SHA-256.
func writeArchive(path, archive string) (string, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	header := &tar.Header{Name: plugin, Mode: 0o755, Size: int64(len(bin)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	if err := tw.WriteHeader(header); err != nil {
		return "", err
	}
	if _, err := tw.Write(bin); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}
