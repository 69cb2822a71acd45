package cpcreds

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// PublishedServer is a server the hub publishes for a cluster in one of this
// bundle's access entries, as the syncer records it on the cluster's token
// copies (AnnotationPublishedServers). cp-creds hands the token out only
// for a server recorded there, so an entry somebody else wrote (a forged
// profile, the deprecated credentialProviders list) cannot send the token
// to a server of their choosing.
type PublishedServer struct {
	Server string `json:"server"`
	// CASHA256 is the hex SHA-256 of the entry's certificate-authority-data,
	// empty when the entry has none (the consumer's system roots).
	CASHA256 string `json:"caSHA256,omitempty"`
}

// ServerOf is what the syncer records of an entry's cluster.
func ServerOf(c clientcmdv1.Cluster) PublishedServer {
	return PublishedServer{Server: c.Server, CASHA256: caDigest(c.CertificateAuthorityData)}
}

func caDigest(ca []byte) string {
	if len(ca) == 0 {
		return ""
	}
	sum := sha256.Sum256(ca)
	return hex.EncodeToString(sum[:])
}

// EncodePublishedServers is the AnnotationPublishedServers value for
// servers: sorted and without duplicates, so equal sets encode equally and
// an unchanged set is no change of the copy.
func EncodePublishedServers(servers []PublishedServer) string {
	sorted := slices.Clone(servers)
	slices.SortFunc(sorted, func(a, b PublishedServer) int {
		return strings.Compare(a.Server+" "+a.CASHA256, b.Server+" "+b.CASHA256)
	})
	sorted = slices.Compact(sorted)
	if sorted == nil {
		sorted = []PublishedServer{}
	}
	raw, _ := json.Marshal(sorted) // a slice of string structs always marshals
	return string(raw)
}

// CheckServer tells whether the exec config cp-creds was run for (cluster:
// spec.cluster of KUBERNETES_EXEC_INFO) is one that the hub publishes for
// the copy's cluster, as recorded on the copy. The server must be a recorded
// one; the CA, when client-go passes it, must be that server's; TLS must be
// verified against the server's own name. The error names what differs.
func CheckServer(secret *corev1.Secret, cluster *clientauthenticationv1.Cluster) error {
	ref := secret.Namespace + "/" + secret.Name
	source := secret.Annotations[AnnotationSourceCluster]
	value, ok := secret.Annotations[AnnotationPublishedServers]
	if !ok {
		return fmt.Errorf("secret %s records no server the hub publishes for cluster %q (annotation %s), so cp-creds cannot tell where the token may go: turn on an access provider of this bundle on the hub (the chart's clusterProfileAccessProvider gate) and let the syncer rewrite the copy",
			ref, source, AnnotationPublishedServers)
	}
	var published []PublishedServer
	if err := json.Unmarshal([]byte(value), &published); err != nil {
		return fmt.Errorf("secret %s has an annotation %s that is no list of servers (%v): the syncer writes it, so something else edited the copy; delete the copy and the syncer rewrites it",
			ref, AnnotationPublishedServers, err)
	}
	if cluster.InsecureSkipTLSVerify {
		return fmt.Errorf("refusing to send the token of cluster %q to %s without verifying its certificate: the exec config's cluster sets insecure-skip-tls-verify, which no entry of this bundle does",
			source, cluster.Server)
	}
	if cluster.TLSServerName != "" {
		return fmt.Errorf("refusing to send the token of cluster %q to %s verified as %q: the exec config's cluster sets tls-server-name, which no entry of this bundle does",
			source, cluster.Server, cluster.TLSServerName)
	}
	if len(published) == 0 {
		return fmt.Errorf("refusing to send the token of cluster %q to %s: no access provider of this bundle publishes a server for that cluster (is its entry's source, such as cluster-proxy, configured?)",
			source, cluster.Server)
	}
	match := slices.IndexFunc(published, func(p PublishedServer) bool { return sameServer(p.Server, cluster.Server) })
	if match < 0 {
		return fmt.Errorf("refusing to send the token of cluster %q to %s: the hub publishes that cluster at %s; the access entry the consumer used was not written by this bundle (look at the ClusterProfile with `kubectl clusterprofile doctor`)",
			source, cluster.Server, describeServers(published))
	}
	if got := caDigest(cluster.CertificateAuthorityData); got != "" && got != published[match].CASHA256 {
		return fmt.Errorf("refusing to send the token of cluster %q to %s: the exec config trusts a CA (sha256 %s) other than the one the hub publishes for that server (%s); the access entry the consumer used was not written by this bundle",
			source, cluster.Server, got, describeCA(published[match].CASHA256))
	}
	return nil
}

// sameServer compares two server URLs as client-go would use them: a
// trailing slash changes nothing, anything else does.
func sameServer(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

func describeServers(servers []PublishedServer) string {
	urls := make([]string, 0, len(servers))
	for _, s := range servers {
		urls = append(urls, s.Server)
	}
	return strings.Join(urls, " and ")
}

func describeCA(digest string) string {
	if digest == "" {
		return "none: the consumer's system roots"
	}
	return "sha256 " + digest
}
