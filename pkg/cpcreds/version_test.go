package cpcreds

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
)

// stubProvider answers with a fixed status and records what it was asked.
type stubProvider struct {
	status clientauthenticationv1.ExecCredentialStatus
	err    error
	got    *clientauthenticationv1.ExecCredential
}

func (s *stubProvider) Name() string { return PluginName }

func (s *stubProvider) GetToken(_ context.Context, in clientauthenticationv1.ExecCredential) (clientauthenticationv1.ExecCredentialStatus, error) {
	s.got = &in
	return s.status, s.err
}

func TestRunAnswersInTheVersionAsked(t *testing.T) {
	expiry := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	status := clientauthenticationv1.ExecCredentialStatus{Token: "t0ken", ExpirationTimestamp: &expiry}
	cluster := `"cluster":{"server":"https://proxy:9092/c1","tls-server-name":"proxy","certificate-authority-data":"Q0E=","config":{"clusterName":"c1"}}`
	wantIn := clientauthenticationv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: "client.authentication.k8s.io/v1", Kind: "ExecCredential"},
		Spec: clientauthenticationv1.ExecCredentialSpec{Cluster: &clientauthenticationv1.Cluster{
			Server: "https://proxy:9092/c1", TLSServerName: "proxy", CertificateAuthorityData: []byte("CA"),
			Config: runtime.RawExtension{Raw: []byte(`{"clusterName":"c1"}`)}}},
	}
	tests := map[string]struct {
		execInfo   string
		provider   *stubProvider
		wantCode   int
		wantStdout string
		wantStderr string
		wantIn     *clientauthenticationv1.ExecCredential
	}{
		"v1": {
			execInfo:   `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{` + cluster + `,"interactive":false}}`,
			provider:   &stubProvider{status: status},
			wantStdout: `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false},"status":{"expirationTimestamp":"2026-01-02T03:04:05Z","token":"t0ken"}}` + "\n",
			wantIn:     &wantIn,
		},
		"v1beta1": {
			execInfo:   `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{` + cluster + `,"interactive":false}}`,
			provider:   &stubProvider{status: status},
			wantStdout: `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false},"status":{"expirationTimestamp":"2026-01-02T03:04:05Z","token":"t0ken"}}` + "\n",
			wantIn:     &wantIn,
		},
		"another version is refused, naming the supported ones": {
			execInfo: `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1","spec":{` + cluster + `}}`,
			provider: &stubProvider{status: status},
			wantCode: 1,
			wantStderr: `[cp-creds] KUBERNETES_EXEC_INFO holds apiVersion "client.authentication.k8s.io/v1alpha1" kind "ExecCredential": ` +
				"cp-creds supports apiVersion client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1; set one of them in the exec config\n",
		},
		"a provider failure is one line": {
			execInfo:   `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{` + cluster + `}}`,
			provider:   &stubProvider{err: errors.New("secret ns/c1-msa\nnot found")},
			wantCode:   1,
			wantStderr: "[cp-creds] secret ns/c1-msa not found\n",
			wantIn:     &wantIn,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), tc.provider, tc.execInfo, &stdout, &stderr)
			got := []any{code, stdout.String(), stderr.String(), tc.provider.got}
			want := []any{tc.wantCode, tc.wantStdout, tc.wantStderr, tc.wantIn}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("exit code, stdout, stderr, provider's input (-want +got):\n%s", diff)
			}
		})
	}
}
