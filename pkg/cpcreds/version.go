package cpcreds

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientauthenticationv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"
	"sigs.k8s.io/cluster-inventory-api/pkg/credentialplugin"
)

// The ExecCredential versions cp-creds answers in. Kueue's documentation and
// the GKE examples configure v1beta1; client-go's own default is v1.
var (
	apiVersionV1      = clientauthenticationv1.SchemeGroupVersion.String()
	apiVersionV1beta1 = clientauthenticationv1beta1.SchemeGroupVersion.String()
	// SupportedAPIVersions lists them, newest first.
	SupportedAPIVersions = []string{apiVersionV1, apiVersionV1beta1}
)

// Run is cp-creds after setup: it reads KUBERNETES_EXEC_INFO (execInfo) in
// whichever supported version client-go wrote it, asks the provider for the
// token, and prints the ExecCredential in that same version, since client-go
// refuses an answer in another one. It replaces credentialplugin.Run, which
// speaks v1 only. It returns the exit code; a failure is one stderr line.
func Run(ctx context.Context, p credentialplugin.Provider, execInfo string, stdout, stderr io.Writer) int {
	out, err := answer(ctx, p, execInfo)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "[%s] %v\n", p.Name(), oneLine(err))
		return 1
	}
	_, _ = stdout.Write(append(out, '\n'))
	return 0
}

func answer(ctx context.Context, p credentialplugin.Provider, execInfo string) ([]byte, error) {
	in, apiVersion, err := ReadExecInfo(execInfo)
	if err != nil {
		return nil, err
	}
	status, err := p.GetToken(ctx, in)
	if err != nil {
		return nil, err
	}
	return EncodeExecCredential(apiVersion, status)
}

// ReadExecInfo decodes an ExecCredential of any supported version into the
// v1 type the Provider takes, and returns the version it was written in.
func ReadExecInfo(raw string) (clientauthenticationv1.ExecCredential, string, error) {
	var typeMeta metav1.TypeMeta
	if err := json.Unmarshal([]byte(raw), &typeMeta); err != nil {
		return clientauthenticationv1.ExecCredential{}, "", fmt.Errorf("%s is not a valid ExecCredential JSON: %w", EnvExecInfo, err)
	}
	if typeMeta.Kind != "ExecCredential" || !supported(typeMeta.APIVersion) {
		return clientauthenticationv1.ExecCredential{}, "", fmt.Errorf("%s holds apiVersion %q kind %q: cp-creds supports apiVersion %s; set one of them in the exec config",
			EnvExecInfo, typeMeta.APIVersion, typeMeta.Kind, strings.Join(SupportedAPIVersions, " or "))
	}
	if typeMeta.APIVersion == apiVersionV1 {
		var in clientauthenticationv1.ExecCredential
		err := json.Unmarshal([]byte(raw), &in)
		return in, apiVersionV1, wrapDecode(err)
	}
	var in clientauthenticationv1beta1.ExecCredential
	err := json.Unmarshal([]byte(raw), &in)
	return specFromV1beta1(in), apiVersionV1beta1, wrapDecode(err)
}

func supported(apiVersion string) bool {
	for _, v := range SupportedAPIVersions {
		if apiVersion == v {
			return true
		}
	}
	return false
}

func wrapDecode(err error) error {
	if err != nil {
		return fmt.Errorf("%s is not a valid ExecCredential JSON: %w", EnvExecInfo, err)
	}
	return nil
}

// specFromV1beta1 carries a v1beta1 request over to v1: the two versions'
// specs have the same fields (v1 only made interactiveMode required in the
// exec config, which is client-go's side).
func specFromV1beta1(in clientauthenticationv1beta1.ExecCredential) clientauthenticationv1.ExecCredential {
	out := clientauthenticationv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: apiVersionV1, Kind: "ExecCredential"},
		Spec:     clientauthenticationv1.ExecCredentialSpec{Interactive: in.Spec.Interactive},
	}
	if c := in.Spec.Cluster; c != nil {
		out.Spec.Cluster = &clientauthenticationv1.Cluster{
			Server: c.Server, TLSServerName: c.TLSServerName, InsecureSkipTLSVerify: c.InsecureSkipTLSVerify,
			CertificateAuthorityData: c.CertificateAuthorityData, ProxyURL: c.ProxyURL,
			DisableCompression: c.DisableCompression, Config: c.Config,
		}
	}
	return out
}

// EncodeExecCredential is the answer to a request in apiVersion.
func EncodeExecCredential(apiVersion string, status clientauthenticationv1.ExecCredentialStatus) ([]byte, error) {
	switch apiVersion {
	case apiVersionV1:
		return json.Marshal(clientauthenticationv1.ExecCredential{
			TypeMeta: metav1.TypeMeta{APIVersion: apiVersionV1, Kind: "ExecCredential"}, Status: &status})
	case apiVersionV1beta1:
		return json.Marshal(clientauthenticationv1beta1.ExecCredential{
			TypeMeta: metav1.TypeMeta{APIVersion: apiVersionV1beta1, Kind: "ExecCredential"},
			Status: &clientauthenticationv1beta1.ExecCredentialStatus{
				ExpirationTimestamp: status.ExpirationTimestamp, Token: status.Token,
				ClientCertificateData: status.ClientCertificateData, ClientKeyData: status.ClientKeyData,
			}})
	}
	return nil, fmt.Errorf("cannot answer in apiVersion %q: cp-creds supports %s", apiVersion, strings.Join(SupportedAPIVersions, " or "))
}
