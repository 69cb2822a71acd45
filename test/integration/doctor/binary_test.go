package doctor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

type result struct {
	stdout, stderr string
	exitCode       int
}

// kubectlClusterprofile runs the built plugin as kubectl would, with only
// the plugin directory (holding cp-creds) on PATH.
func kubectlClusterprofile(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "kubectl-clusterprofile"), args...)
	cmd.Env = []string{"PATH=" + binDir, "HOME=" + binDir, "KUBECONFIG=" + adminKubeconfigPath(t)}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running kubectl-clusterprofile: %v", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), exitCode: cmd.ProcessState.ExitCode()}
}

// TestDoctorBinary runs the built plugin end to end: exit 0 with every
// check passed (--connect through cp-creds found on PATH), 1 with a failed
// check, 2 on usage and connection errors; and `get`.
func TestDoctorBinary(t *testing.T) {
	ctx := framework.ContextFor(t)
	const healthy, failing = "doctor-binary", "doctor-binary-failing"
	framework.CreateNamespace(ctx, t, env.Client, healthy)
	framework.CreateNamespace(ctx, t, env.Client, failing)
	token, expiry := env.ServiceAccountToken(ctx, t, healthy, "multikueue-sa", 3*time.Hour)
	framework.CreateProfile(ctx, t, env.Client, profile(healthy, "cluster1", env.Config.Host, env.Config.CAData))
	createSecret(t, copyOf(t, healthy, "cluster1", token, expiry))
	framework.CreateProfile(ctx, t, env.Client, profile(failing, "cluster1", "https://10.0.0.1:6443", env.Config.CAData))

	t.Run("every check passes", func(t *testing.T) {
		got := kubectlClusterprofile(t, "doctor", "-n", healthy, "--managed-serviceaccount", msa, "--connect", "-o", "json")

		if got.exitCode != doctor.ExitOK || got.stderr != "" {
			t.Fatalf("exit code %d, stderr %q", got.exitCode, got.stderr)
		}
		var report doctor.Report
		if err := json.Unmarshal([]byte(got.stdout), &report); err != nil {
			t.Fatalf("stdout is not a report: %v\n%s", err, got.stdout)
		}
		want := doctor.Report{Namespace: healthy, OK: true, Rows: []doctor.Row{connected(row("cluster1", nil), "", serverVersion(t))},
			Mirror: doctor.MirrorNote(nil)}
		if diff := cmp.Diff(want, report, ignoreLatency); diff != "" {
			t.Errorf("report (-want +got):\n%s", diff)
		}
	})
	t.Run("a check fails", func(t *testing.T) {
		got := kubectlClusterprofile(t, "doctor", "-n", failing, "--managed-serviceaccount", msa)

		want := result{exitCode: doctor.ExitFailed, stdout: "CLUSTER   RESULT  PROVIDER                 DETAILS\n" +
			"cluster1  FAIL    open-cluster-management  passed: profile, entry, server, ca, extension, access\n" +
			fmt.Sprintf("                                           token: Secret %s/cluster1-multikueue does not exist: the hub has no ManagedCluster cluster1, so none of its tokens is copied anywhere; this profile was written by another writer, or is left over.\n", failing) +
			"MIRROR: " + doctor.MirrorNote(nil) + "\n"}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(result{})); diff != "" {
			t.Errorf("run (-want +got):\n%s", diff)
		}
	})
	t.Run("usage and connection errors", func(t *testing.T) {
		tests := map[string]struct {
			args       []string
			wantStderr string
		}{
			"no --managed-serviceaccount": {args: []string{"doctor", "-n", healthy},
				wantStderr: "error: --managed-serviceaccount is required: the ManagedServiceAccount whose token the consumer's cp-creds uses\n"},
			"no plugin for --connect": {args: []string{"doctor", "-n", healthy, "--managed-serviceaccount", msa, "--connect", "--plugin", "no-such-plugin"},
				wantStderr: "error: --connect runs the exec plugin, but \"no-such-plugin\" was not found (exec: \"no-such-plugin\": executable file not found in $PATH): install cp-creds on PATH or pass --plugin <path>\n"},
			"an unknown output": {args: []string{"doctor", "-n", healthy, "--managed-serviceaccount", msa, "-o", "yaml"},
				wantStderr: "error: --output \"yaml\": use table or json\n"},
		}
		for name, tc := range tests {
			t.Run(name, func(t *testing.T) {
				got := kubectlClusterprofile(t, tc.args...)
				want := result{exitCode: doctor.ExitError, stderr: tc.wantStderr}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(result{})); diff != "" {
					t.Errorf("run (-want +got):\n%s", diff)
				}
			})
		}
		unreachable := kubectlClusterprofile(t, "doctor", "-n", healthy, "--managed-serviceaccount", msa, "--server", "https://127.0.0.1:1")
		if unreachable.exitCode != doctor.ExitError || unreachable.stdout != "" {
			t.Errorf("an unreachable hub: exit code %d, stdout %q; want %d and nothing", unreachable.exitCode, unreachable.stdout, doctor.ExitError)
		}
	})
	t.Run("get", func(t *testing.T) {
		got := kubectlClusterprofile(t, "get", "-n", healthy, "-o", "json")

		if got.exitCode != 0 || got.stderr != "" {
			t.Fatalf("exit code %d, stderr %q", got.exitCode, got.stderr)
		}
		var summaries []doctor.Summary
		if err := json.Unmarshal([]byte(got.stdout), &summaries); err != nil {
			t.Fatalf("stdout is not summaries: %v\n%s", err, got.stdout)
		}
		want := []doctor.Summary{{Cluster: "cluster1", Version: "v1.35.4", Healthy: "True", Providers: []string{"open-cluster-management"},
			TokenExpiry: map[string]string{msa: expiry.UTC().Format(time.RFC3339)}}}
		if diff := cmp.Diff(want, summaries); diff != "" {
			t.Errorf("summaries (-want +got):\n%s", diff)
		}
	})
}
