package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestGet(t *testing.T) {
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "open-cluster-management.io/clusterprofile-bundle", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		},
	}
	cases := map[string]struct {
		version, revision, buildDate string
		bi                           *debug.BuildInfo
		want                         Info
	}{
		"stamped by the Makefile wins over the build information": {
			version: "0.1.0", revision: "def456", buildDate: "2026-02-03T00:00:00Z", bi: vcs,
			want: Info{Version: "0.1.0", Revision: "def456", BuildDate: "2026-02-03T00:00:00Z", GoVersion: "go1.26.8"},
		},
		"unstamped: revision and time from the VCS settings, no version from (devel)": {
			bi:   vcs,
			want: Info{Version: Unknown, Revision: "abc123", BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"},
		},
		"go install module@version": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}},
			want: Info{Version: "v0.1.0", Revision: Unknown, BuildDate: Unknown, GoVersion: "go1.26.8"},
		},
		"no build information": {
			version: "0.1.0",
			want:    Info{Version: "0.1.0", Revision: Unknown, BuildDate: Unknown},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := get(tc.version, tc.revision, tc.buildDate, tc.bi)
			ignore := cmpopts.IgnoreFields(Info{}, "Platform")
			if tc.bi == nil {
				ignore = cmpopts.IgnoreFields(Info{}, "Platform", "GoVersion")
			}
			if diff := cmp.Diff(tc.want, got, ignore); diff != "" {
				t.Errorf("get (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLine(t *testing.T) {
	i := Info{Version: "0.1.0", Revision: "abc", BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8", Platform: "linux/arm64"}
	want := "cp-creds version 0.1.0 (revision abc, built 2026-01-02T03:04:05Z, go1.26.8 linux/arm64)"
	if got := i.Line("cp-creds"); got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestRequested(t *testing.T) {
	cases := map[string]struct {
		args []string
		want bool
	}{
		"none":                     {},
		"--version":                {args: []string{"--version"}, want: true},
		"-version":                 {args: []string{"-version"}, want: true},
		"among other flags":        {args: []string{"--kubeconfig", "x", "--version"}, want: true},
		"after --":                 {args: []string{"--", "--version"}},
		"a value that mentions it": {args: []string{"--name=--version"}},
		"other flags only":         {args: []string{"--help"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Requested(tc.args); got != tc.want {
				t.Errorf("Requested(%q) = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}
