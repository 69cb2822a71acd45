package cpcreds

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestParseFlags(t *testing.T) {
	tests := map[string]struct {
		args    []string
		want    string
		wantErr []string
	}{
		"--flag=value":   {args: []string{"--managed-serviceaccount=multikueue"}, want: "multikueue"},
		"-flag value":    {args: []string{"-managed-serviceaccount", "multikueue"}, want: "multikueue"},
		"missing flag":   {wantErr: []string{"missing --managed-serviceaccount=<name>", "args of the exec config"}},
		"empty value":    {args: []string{"--managed-serviceaccount="}, wantErr: []string{"missing --managed-serviceaccount"}},
		"unknown flag":   {args: []string{"--msa=x"}, wantErr: []string{"flag provided but not defined: -msa", "usage: cp-creds --managed-serviceaccount=<name>"}},
		"extra argument": {args: []string{"--managed-serviceaccount=a", "b"}, wantErr: []string{`unexpected argument "b"`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseFlags(tc.args)
			checkError(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseFlags() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckExecInfo(t *testing.T) {
	tests := map[string]struct {
		raw     string
		wantErr []string
	}{
		"as client-go sends it": {
			raw: `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"server":"https://hub:6443","config":{"clusterName":"cluster1"}},"interactive":false}}`,
		},
		"unset": {
			wantErr: []string{"KUBERNETES_EXEC_INFO is not set", "run by client-go as an exec credential plugin"},
		},
		"not JSON": {
			raw:     `{"kind":`,
			wantErr: []string{"KUBERNETES_EXEC_INFO is not a valid ExecCredential JSON"},
		},
		"v1beta1, as Kueue's and GKE's examples configure it": {
			raw: `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"cluster":{"server":"https://hub"}}}`,
		},
		"v1alpha1": {
			raw: `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1","spec":{"cluster":{"server":"https://hub"}}}`,
			wantErr: []string{`apiVersion "client.authentication.k8s.io/v1alpha1"`,
				"supports apiVersion client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1"},
		},
		"another kind": {
			raw:     `{"kind":"Pod","apiVersion":"client.authentication.k8s.io/v1"}`,
			wantErr: []string{`kind "Pod"`},
		},
		"provideClusterInfo not set": {
			raw:     `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}`,
			wantErr: []string{"no spec.cluster", "set provideClusterInfo: true"},
		},
		"no server": {
			raw:     `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"config":{"clusterName":"c"}}}}`,
			wantErr: []string{"no spec.cluster.server"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkError(t, checkExecInfo(tc.raw), tc.wantErr)
		})
	}
}

func TestReportSetupError(t *testing.T) {
	tests := map[string]struct {
		err        error
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"help": {
			err:        flag.ErrHelp,
			wantCode:   0,
			wantStdout: Usage,
		},
		"failure": {
			err:        errors.New("missing --managed-serviceaccount=<name>"),
			wantCode:   1,
			wantStderr: "[cp-creds] missing --managed-serviceaccount=<name>\n",
		},
		"multi-line failure": {
			err:        errors.New("no kubeconfig:\n  set $KUBECONFIG"),
			wantCode:   1,
			wantStderr: "[cp-creds] no kubeconfig: set $KUBECONFIG\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := ReportSetupError(&stdout, &stderr, tc.err)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// kubeconfig is an in-memory kubeconfig whose current context uses namespace.
func kubeconfig(namespace string) clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: "https://hub.example:6443"}
	cfg.AuthInfos["me"] = &clientcmdapi.AuthInfo{Token: "kubeconfig-token"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "me", Namespace: namespace}
	cfg.CurrentContext = "ctx"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{})
}

func TestRestConfigFallsBackToKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod, whatever runs the tests

	cfg, err := restConfig(kubeconfig("team-a"))

	if err != nil {
		t.Fatalf("restConfig() error: %v", err)
	}
	if diff := cmp.Diff("https://hub.example:6443", cfg.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
}

func TestRestConfigWithNothingToUse(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")

	_, err := restConfig(clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{}))

	checkError(t, err, []string{"cannot build a Kubernetes client: not running in a pod and no kubeconfig found: set $KUBECONFIG"})
	if strings.Contains(err.Error(), "KUBERNETES_MASTER") {
		t.Errorf("error %q repeats clientcmd's misleading hint", err)
	}
}

func TestContextNamespace(t *testing.T) {
	tests := map[string]struct {
		config clientcmd.ClientConfig
		want   string
	}{
		"context with a namespace": {config: kubeconfig("team-a"), want: "team-a"},
		"context without one":      {config: kubeconfig(""), want: ""},
		"no kubeconfig":            {config: clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{}), want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, contextNamespace(tc.config)()); diff != "" {
				t.Errorf("contextNamespace() (-want +got):\n%s", diff)
			}
		})
	}
}
