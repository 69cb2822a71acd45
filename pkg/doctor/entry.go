package doctor

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// chooseEntry picks the entry a consumer configured with providers (in its
// order) would use, as cluster-inventory-api's pkg/access does: the first
// provider name the profile has an entry for, accessProviders winning over
// the deprecated credentialProviders of the same name.
func chooseEntry(p *cpv1alpha1.ClusterProfile, providers []string) (*cpv1alpha1.AccessProvider, string) {
	byName := map[string]*cpv1alpha1.AccessProvider{}
	var names []string
	for _, list := range [][]cpv1alpha1.AccessProvider{p.Status.CredentialProviders, p.Status.AccessProviders} {
		for i := range list {
			if _, seen := byName[list[i].Name]; !seen {
				names = append(names, list[i].Name)
			}
			byName[list[i].Name] = &list[i]
		}
	}
	for _, name := range providers {
		if entry, ok := byName[name]; ok {
			return entry, ""
		}
	}
	if len(names) == 0 {
		return nil, "The profile has no access provider entry: turn on an access provider on the hub (the chart's clusterProfileAccessProvider gate) and check its condition ClusterProxyAccess on the profile."
	}
	return nil, fmt.Sprintf("The profile has no entry for the providers %s, only for %s: name one of these in the consumer's provider list (and in --provider), or turn on the provider you configured.",
		strings.Join(providers, ", "), strings.Join(names, ", "))
}

// checkServer holds the server to the rule the access providers follow
// (clusterprofile.ServerProblem): what client-go and Kueue's
// validateRestConfig accept, over TLS.
func checkServer(server string) []string {
	if problem := clusterprofile.ServerProblem(server); problem != "" {
		return []string{fmt.Sprintf("The entry's server %s: consumers refuse it (a token must not travel in clear; Kueue trusts only IP addresses and DNS-1123 names); configure the access provider with https://<host>[:<port>][/<path>].", problem)}
	}
	return nil
}

// checkCA: the CA must be certificates (clusterprofile.CertificateAuthorityBlocks)
// that parse, none of them expired, or every TLS handshake with the server
// fails.
func checkCA(data []byte, now time.Time) []string {
	if len(data) == 0 {
		return []string{"The entry has no certificate-authority-data: the consumer would trust only its system roots; the access provider must publish the server's CA."}
	}
	ders, problem := clusterprofile.CertificateAuthorityBlocks(data)
	var certs []*x509.Certificate
	for _, der := range ders {
		cert, err := x509.ParseCertificate(der)
		if err != nil && problem == "" {
			problem = fmt.Sprintf("holds a certificate that does not parse (%v)", err)
		}
		certs = append(certs, cert)
	}
	if problem != "" {
		return []string{fmt.Sprintf("The entry's certificate-authority-data %s: check the CA the access provider reads (for cluster-proxy, tls.crt of Secret cluster-proxy-user-serving-cert).", problem)}
	}
	var fixes []string
	for _, c := range certs {
		if now.After(c.NotAfter) {
			fixes = append(fixes, fmt.Sprintf("The CA certificate %q expired at %s: rotate the server's CA (for cluster-proxy, its user server certificate); the access provider republishes it.",
				c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339)))
		}
	}
	return fixes
}

// checkExtension: the exec extension must name the cluster, because that
// name is how cp-creds finds the token copy.
func checkExtension(entry *cpv1alpha1.AccessProvider, cluster string) []string {
	for _, ext := range entry.Cluster.Extensions {
		if ext.Name != cpcreds.ExecExtensionName {
			continue
		}
		var cfg cpcreds.ExecClusterConfig
		if err := json.Unmarshal(ext.Extension.Raw, &cfg); err != nil || cfg.ClusterName != cluster {
			return []string{fmt.Sprintf("The entry's extension %s is %s, not {\"clusterName\": %q}: cp-creds would look for another cluster's token; the access provider writes it, so check who else writes the entry %q.",
				cpcreds.ExecExtensionName, strings.TrimSpace(string(ext.Extension.Raw)), cluster, entry.Name)}
		}
		return nil
	}
	return []string{fmt.Sprintf("The entry %q has no extension %s: cp-creds cannot tell which cluster it runs for; use an entry written by this bundle's access providers.",
		entry.Name, cpcreds.ExecExtensionName)}
}

// checkPublished: the entry's server (and CA) must be one the hub publishes
// for the cluster, as the syncer recorded it on the token copy: the rule
// cp-creds applies (cpcreds.CheckServer) before it hands the token out.
func checkPublished(copy *corev1.Secret, entry *cpv1alpha1.AccessProvider) []string {
	err := cpcreds.CheckServer(copy, &clientauthenticationv1.Cluster{Server: entry.Cluster.Server,
		CertificateAuthorityData: entry.Cluster.CertificateAuthorityData, TLSServerName: entry.Cluster.TLSServerName,
		InsecureSkipTLSVerify: entry.Cluster.InsecureSkipTLSVerify})
	if err != nil {
		return []string{sentence(err.Error())}
	}
	return nil
}
