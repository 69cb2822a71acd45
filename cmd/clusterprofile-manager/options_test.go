package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/hubmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	"open-cluster-management.io/clusterprofile-bundle/pkg/version"
)

func TestParseOptions(t *testing.T) {
	opts, _, err := parseOptions([]string{
		"--feature-gates=ClusterProfile=true", "--cluster-manager-name=fleet-a", "--leader-elect",
		"--kube-api-qps=20", "--kube-api-burst=40", "--mirror-workers=4", "--zap-log-level=debug",
	})
	if err != nil {
		t.Fatal(err)
	}
	m := opts.manager
	if !m.FeatureGates.Enabled(features.ClusterProfile) || m.ClusterManagerName != "fleet-a" || !m.LeaderElect ||
		opts.qps != 20 || opts.burst != 40 || m.MirrorWorkers != 4 {
		t.Errorf("unexpected options: %+v (qps %v, burst %v)", m, opts.qps, opts.burst)
	}
}

func TestParseOptionsDefaultsAndErrors(t *testing.T) {
	opts, _, err := parseOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.manager.FeatureGates.Enabled(features.ClusterProfile) {
		t.Error("ClusterProfile is Alpha and must default to off")
	}
	if opts.manager.ClusterManagerName != "open-cluster-management" {
		t.Errorf("default manager name = %q", opts.manager.ClusterManagerName)
	}
	for _, args := range [][]string{
		{"--feature-gates=NoSuchGate=true"},
		{"--cluster-manager-name="},
		{"--no-such-flag"},
		{"--facts-min-interval=1h", "--facts-refresh=10m"},
		{"--facts-significant-change=-1"},
		{"--upstream-namespaces=Team_A"},
		{"--upstream-namespaces="},
	} {
		if _, _, err := parseOptions(args); err == nil {
			t.Errorf("parseOptions(%v) should fail", args)
		}
	}
}

func TestMetricsAreSecureUnlessAskedOtherwise(t *testing.T) {
	cases := map[string]struct {
		args         []string
		wantAddr     string
		wantInsecure bool
		wantCertDir  string
	}{
		"default":              {wantAddr: ":8443"},
		"certificate given":    {args: []string{"--metrics-cert-dir=/certs"}, wantAddr: ":8443", wantCertDir: "/certs"},
		"plain HTTP on 8080":   {args: []string{"--metrics-secure=false", "--metrics-bind-address=:8080"}, wantAddr: ":8080", wantInsecure: true},
		"metrics switched off": {args: []string{"--metrics-bind-address=0"}, wantAddr: "0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts, _, err := parseOptions(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			m := opts.manager
			if m.MetricsAddr != tc.wantAddr || m.InsecureMetrics != tc.wantInsecure || m.MetricsCertDir != tc.wantCertDir {
				t.Errorf("metrics address %q, insecure %v, cert dir %q; want %q, %v, %q",
					m.MetricsAddr, m.InsecureMetrics, m.MetricsCertDir, tc.wantAddr, tc.wantInsecure, tc.wantCertDir)
			}
		})
	}
}

func TestUnscopedTokensGoEverywhereUnlessAskedOtherwise(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    credsync.UnscopedTokens
		wantErr bool
	}{
		"default":       {want: credsync.UnscopedEverywhere},
		"nowhere":       {args: []string{"--unscoped-tokens=nowhere"}, want: credsync.UnscopedNowhere},
		"everywhere":    {args: []string{"--unscoped-tokens=everywhere"}, want: credsync.UnscopedEverywhere},
		"anything else": {args: []string{"--unscoped-tokens=somewhere"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts, _, err := parseOptions(tc.args)
			if tc.wantErr {
				if err == nil {
					t.Fatal("parseOptions should fail")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.manager.UnscopedTokens != tc.want {
				t.Errorf("unscoped tokens %q, want %q", opts.manager.UnscopedTokens, tc.want)
			}
		})
	}
}

func TestAgentImageFollowsTheRelease(t *testing.T) {
	for release, want := range map[string]string{
		"0.1.0":         "ghcr.io/open-cluster-management-io/clusterprofile-bundle:0.1.0",
		version.Unknown: "ghcr.io/open-cluster-management-io/clusterprofile-bundle:latest",
		"":              "ghcr.io/open-cluster-management-io/clusterprofile-bundle:latest",
	} {
		if got := agentImageFor(release); got != want {
			t.Errorf("agentImageFor(%q) = %q, want %q", release, got, want)
		}
	}
}

// The write budget defaults to damping.Default with the mirror's settle
// time, and the agent gets the manager's but for the settle time, which it
// does not take: one rule for both publishers of facts.
func TestFactsBudgetIsSharedWithTheAgent(t *testing.T) {
	opts, _, err := parseOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	defaults := damping.Default()
	defaults.Settle = damping.DefaultSettle
	if opts.manager.Facts != defaults {
		t.Errorf("default facts budget = %+v, want %+v", opts.manager.Facts, defaults)
	}
	opts, _, err = parseOptions([]string{"--facts-min-interval=10m", "--facts-significant-change=0.2", "--facts-refresh=3h", "--facts-settle=5s"})
	if err != nil {
		t.Fatal(err)
	}
	want := damping.Rule{MinInterval: 10 * time.Minute, SignificantFraction: 0.2, Refresh: 3 * time.Hour, Settle: 5 * time.Second}
	if opts.manager.Facts != want {
		t.Errorf("facts budget = %+v, want %+v", opts.manager.Facts, want)
	}
	want.Settle = 0
	if got := hubmanager.AgentOptions(opts.manager).Facts; got != want {
		t.Errorf("the agent's facts budget = %+v, want the manager's without the settle time %+v", got, want)
	}
}

// TestUpstreamTwinsAreTrustedOnlyInTheUpstreamNamespaces: by default only
// OCM's addon namespace holds upstream managers, and decoys are reported.
func TestUpstreamTwinsAreTrustedOnlyInTheUpstreamNamespaces(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want coexistence.Trust
	}{
		"default": {want: coexistence.Trust{Namespaces: []string{"open-cluster-management-addon"}, ReportDecoys: true}},
		"set":     {args: []string{"--upstream-namespaces=ocm-addons,hub", "--report-twin-decoys=false"}, want: coexistence.Trust{Namespaces: []string{"ocm-addons", "hub"}}},
	} {
		t.Run(name, func(t *testing.T) {
			opts, _, err := parseOptions(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, opts.manager.Coexistence); diff != "" {
				t.Errorf("trust (-want +got):\n%s", diff)
			}
		})
	}
}
