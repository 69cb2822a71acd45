package installcheck

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestMainNeedsTheReleaseNamespaceAndDeployment(t *testing.T) {
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"nothing":        {args: nil, wantErr: "--namespace and --deployment are required"},
		"no deployment":  {args: []string{"--namespace=ocm"}, wantErr: "--namespace and --deployment are required"},
		"unknown flag":   {args: []string{"--namspace=ocm"}, wantErr: "flag provided but not defined: -namspace"},
		"bad timeout":    {args: []string{"--namespace=ocm", "--deployment=d", "--timeout=soon"}, wantErr: "invalid value"},
		"outside a pod":  {args: []string{"--namespace=ocm", "--deployment=d"}, wantErr: "unable to load in-cluster configuration"},
		"bad kubeconfig": {args: []string{"--namespace=ocm", "--deployment=d", "--kubeconfig=/nonexistent"}, wantErr: "/nonexistent"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			err := Main(context.Background(), tc.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Main(%v) = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}
