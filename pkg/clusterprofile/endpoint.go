package clusterprofile

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The rules an access entry's server and CA follow so that the consumers
// (client-go, cluster-inventory-api's pkg/access, Kueue's MultiKueue) can
// use it: the access providers refuse to publish what breaks them, and the
// doctor reports it with the same words.

// ServerProblem says what keeps server from being an entry's server,
// empty when nothing does: it must be an absolute https URL (a token must
// not travel in clear) whose host is an IP address or a DNS-1123 name
// (Kueue refuses any other host as an untrusted endpoint).
func ServerProblem(server string) string {
	u, err := url.Parse(server)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return fmt.Sprintf("%q is not an absolute https:// URL", server)
	case u.Scheme != "https":
		return fmt.Sprintf("%q uses %s, not https", server, u.Scheme)
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		return ""
	}
	if problems := validation.IsDNS1123Subdomain(strings.ToLower(host)); len(problems) > 0 {
		return fmt.Sprintf("%q has a host that is neither an IP address nor a DNS-1123 name (%s)", server, strings.Join(problems, "; "))
	}
	return ""
}

// CertificateAuthorityBlocks reads an entry's CA: one or more PEM
// CERTIFICATE blocks and nothing else but white space, whose DER contents
// it returns. The problem is empty when it is that; a CA that is not fails
// every TLS handshake. (Whether each block is a certificate still valid
// today is for the reader to check: the doctor does.)
func CertificateAuthorityBlocks(data []byte) (ders [][]byte, problem string) {
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			if len(ders) == 0 || len(bytes.TrimSpace(rest)) > 0 {
				return nil, "is not PEM-encoded certificates"
			}
			return ders, ""
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Sprintf("holds a PEM block of type %q, not only certificates", block.Type)
		}
		ders = append(ders, block.Bytes)
		data = rest
	}
}
