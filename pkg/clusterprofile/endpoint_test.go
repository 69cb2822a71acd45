package clusterprofile

import (
	"encoding/pem"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServerProblem(t *testing.T) {
	tests := map[string]string{
		"https://api.c1.example.com:6443/path": "",
		"https://10.0.0.1:6443":                "",
		"https://[fd00::1]:6443":               "",
		"https://API.C1.example.com":           "",
		"http://api.c1:6443":                   `"http://api.c1:6443" uses http, not https`,
		"api.c1:6443":                          `"api.c1:6443" is not an absolute https:// URL`,
		"/clusters/c1":                         `"/clusters/c1" is not an absolute https:// URL`,
		"https:///c1":                          `"https:///c1" is not an absolute https:// URL`,
		"https://api_c1:6443":                  `"https://api_c1:6443" has a host that is neither an IP address nor a DNS-1123 name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))`,
	}
	for server, want := range tests {
		if got := ServerProblem(server); got != want {
			t.Errorf("ServerProblem(%q) = %q, want %q", server, got, want)
		}
	}
}

func TestCertificateAuthorityBlocks(t *testing.T) {
	block := func(kind, der string) []byte { return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: []byte(der)}) }
	tests := map[string]struct {
		data    []byte
		want    [][]byte
		problem string
	}{
		"two certificates":            {data: append(block("CERTIFICATE", "a"), block("CERTIFICATE", "b")...), want: [][]byte{[]byte("a"), []byte("b")}},
		"trailing white space":        {data: append(block("CERTIFICATE", "a"), "\n  \n"...), want: [][]byte{[]byte("a")}},
		"empty":                       {problem: "is not PEM-encoded certificates"},
		"text":                        {data: []byte("CA"), problem: "is not PEM-encoded certificates"},
		"a certificate, then garbage": {data: append(block("CERTIFICATE", "a"), "garbage"...), problem: "is not PEM-encoded certificates"},
		"a private key":               {data: append(block("CERTIFICATE", "a"), block("PRIVATE KEY", "k")...), problem: `holds a PEM block of type "PRIVATE KEY", not only certificates`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, problem := CertificateAuthorityBlocks(tc.data)
			if diff := cmp.Diff(struct {
				Blocks  [][]byte
				Problem string
			}{tc.want, tc.problem}, struct {
				Blocks  [][]byte
				Problem string
			}{got, problem}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
