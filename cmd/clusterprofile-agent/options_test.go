package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// The flags the addon's Deployment passes.
var deploymentArgs = []string{
	"--hub-kubeconfig=/var/run/hub/kubeconfig", "--cluster-name=cluster1",
	"--addon-namespace=open-cluster-management-agent-addon", "--health-probe-bind-address=:8081",
}

func TestParseOptionsDefaults(t *testing.T) {
	opts, _, err := parseOptions(deploymentArgs)
	if err != nil {
		t.Fatal(err)
	}
	want := options{
		agent: agent.Options{ClusterName: "cluster1", AddonNamespace: "open-cluster-management-agent-addon",
			Period: 30 * time.Second, LeaseStaleAfter: 60 * time.Second, Facts: damping.Default()},
		hubKubeconfig: "/var/run/hub/kubeconfig", probeAddr: ":8081",
	}
	if diff := cmp.Diff(want, *opts, cmp.AllowUnexported(options{})); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestParseOptionsEveryFlag(t *testing.T) {
	opts, zapOpts, err := parseOptions(append(deploymentArgs, "--kubeconfig=/tmp/managed", "--period=45s",
		"--lease-stale-after=2m", "--unhealthy-node-tolerance=2", "--zap-log-level=debug",
		"--facts-min-interval=10m", "--facts-significant-change=0.25", "--facts-refresh=2h"))
	if err != nil {
		t.Fatal(err)
	}
	a := opts.agent
	if opts.kubeconfig != "/tmp/managed" || a.Period != 45*time.Second || a.LeaseStaleAfter != 2*time.Minute ||
		a.UnhealthyNodeTolerance != 2 || zapOpts.Level == nil ||
		a.Facts != (damping.Rule{MinInterval: 10 * time.Minute, SignificantFraction: 0.25, Refresh: 2 * time.Hour}) {
		t.Errorf("unexpected options: %+v", opts)
	}
}

func TestParseOptionsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--cluster-name=cluster1"},
		{"--hub-kubeconfig=/var/run/hub/kubeconfig"},
		{"--hub-kubeconfig=/k", "--cluster-name=c", "--period=soon"},
		{"--no-such-flag"},
	} {
		if _, _, err := parseOptions(args); err == nil {
			t.Errorf("parseOptions(%v) should fail", args)
		}
	}
}

func TestConfigLoadsBothKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, server string) string {
		path := filepath.Join(dir, name)
		kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server +
			"\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
		if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	opts, _, err := parseOptions([]string{"--hub-kubeconfig=" + write("hub", "https://hub:6443"), "--cluster-name=c1",
		"--kubeconfig=" + write("managed", "https://managed:6443")})
	if err != nil {
		t.Fatal(err)
	}
	managed, hub, err := opts.configs()
	if err != nil {
		t.Fatal(err)
	}
	if hub.Host != "https://hub:6443" || managed.Host != "https://managed:6443" {
		t.Errorf("hub %s, managed %s", hub.Host, managed.Host)
	}
	opts.hubKubeconfig = filepath.Join(dir, "missing")
	if _, _, err := opts.configs(); err == nil {
		t.Error("a missing hub kubeconfig should fail")
	}
}
