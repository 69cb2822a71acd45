// Package version says which build of the bundle a binary is: the release
// version from the repository's VERSION file, the git revision and the build
// date, stamped by the Makefile with -ldflags -X (see LDFLAGS there), with
// the Go toolchain's build information as the fallback for builds that were
// not stamped (go build, go install, go test).
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
)

// Set with -ldflags "-X open-cluster-management.io/clusterprofile-bundle/pkg/version.version=…".
var (
	version   string
	revision  string
	buildDate string
)

// Unknown stands for a field neither the linker nor the build information set.
const Unknown = "unknown"

// Info is what --version prints.
type Info struct {
	// Version is the release version (VERSION), e.g. 0.1.0.
	Version string
	// Revision is the git commit the binary was built from.
	Revision string
	// BuildDate is when the binary was built (RFC 3339, UTC).
	BuildDate string
	// GoVersion and Platform are the toolchain's and the target's.
	GoVersion string
	Platform  string
}

// Get returns this binary's version information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(version, revision, buildDate, bi)
}

// get fills each field from the stamped value, else from the build
// information (the main module's version, vcs.revision and vcs.time), else Unknown.
func get(version, revision, buildDate string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Revision: revision, BuildDate: buildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Revision == "":
				info.Revision = s.Value
			case s.Key == "vcs.time" && info.BuildDate == "":
				info.BuildDate = s.Value
			}
		}
		info.GoVersion = bi.GoVersion
	}
	for _, f := range []*string{&info.Version, &info.Revision, &info.BuildDate} {
		if *f == "" {
			*f = Unknown
		}
	}
	return info
}

// Line is the --version line of the named command.
func (i Info) Line(command string) string {
	return fmt.Sprintf("%s version %s (revision %s, built %s, %s %s)",
		command, i.Version, i.Revision, i.BuildDate, i.GoVersion, i.Platform)
}

// Requested says whether args ask for the version: --version (or -version)
// before any "--".
func Requested(args []string) bool {
	end := slices.Index(args, "--")
	if end < 0 {
		end = len(args)
	}
	return slices.ContainsFunc(args[:end], func(a string) bool { return a == "--version" || a == "-version" })
}

// Print writes the named command's --version line.
func Print(w io.Writer, command string) {
	_, _ = fmt.Fprintln(w, Get().Line(command))
}
