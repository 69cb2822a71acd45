package accessprovider

import (
	"encoding/pem"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

var (
	now     = time.Date(2026, 3, 4, 5, 6, 7, 500, time.UTC)
	earlier = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
)

func certificate(ns string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: UserServerSecretName}, Data: data}
}

func proxyAccess(status metav1.ConditionStatus, reason, message string, at metav1.Time) *metav1.Condition {
	return &metav1.Condition{Type: ConditionClusterProxyAccess, Status: status, Reason: reason, Message: message, LastTransitionTime: at}
}

func TestProxyDesired(t *testing.T) {
	config := utiltesting.MakeProxyConfiguration("proxy-ns")
	noNamespace := utiltesting.MakeProxyConfiguration("")
	ca := map[string][]byte{UserServerCAKey: []byte("CA")}
	second := metav1.NewTime(now.Truncate(time.Second))
	entry := cpv1alpha1.AccessProvider{Name: ProxyEntryName, Cluster: clientcmdv1.Cluster{
		Server: "https://cluster-proxy-addon-user.proxy-ns:9092/c1", CertificateAuthorityData: []byte("CA"),
		Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}}

	cases := map[string]struct {
		world    ProxyWorld
		existing []metav1.Condition
		want     Desired
	}{
		"configured: the entry and a True condition": {
			world: ProxyWorld{Configuration: config, Certificate: certificate("proxy-ns", ca)},
			want: Desired{Entry: &entry, Condition: proxyAccess(metav1.ConditionTrue, ReasonUserServerConfigured,
				"Reachable through cluster-proxy's user server at https://cluster-proxy-addon-user.proxy-ns:9092/c1", second)},
		},
		"an unchanged status keeps its transition time": {
			world:    ProxyWorld{Configuration: config, Certificate: certificate("proxy-ns", ca)},
			existing: []metav1.Condition{*proxyAccess(metav1.ConditionTrue, ReasonUserServerConfigured, "old message", earlier)},
			want: Desired{Entry: &entry, Condition: proxyAccess(metav1.ConditionTrue, ReasonUserServerConfigured,
				"Reachable through cluster-proxy's user server at https://cluster-proxy-addon-user.proxy-ns:9092/c1", earlier)},
		},
		"no configuration": {
			want: Desired{Condition: proxyAccess(metav1.ConditionFalse, ReasonConfigurationMissing,
				`ManagedProxyConfiguration "cluster-proxy" not found: is the cluster-proxy addon installed?`, second)},
		},
		"a configuration without a proxy server namespace": {
			world: ProxyWorld{Configuration: noNamespace},
			want: Desired{Condition: proxyAccess(metav1.ConditionFalse, ReasonConfigurationNamespace,
				`ManagedProxyConfiguration "cluster-proxy" has no spec.proxyServer.namespace`, second)},
		},
		"no user server certificate": {
			world: ProxyWorld{Configuration: config},
			want: Desired{Condition: proxyAccess(metav1.ConditionFalse, ReasonCertificateMissing,
				"Secret proxy-ns/cluster-proxy-user-serving-cert not found: is cluster-proxy's user server enabled (userServer.enabled=true)?", second)},
		},
		"a certificate Secret without tls.crt": {
			world:    ProxyWorld{Configuration: config, Certificate: certificate("proxy-ns", map[string][]byte{"tls.key": []byte("k")})},
			existing: []metav1.Condition{*proxyAccess(metav1.ConditionTrue, ReasonUserServerConfigured, "was fine", earlier)},
			want: Desired{Condition: proxyAccess(metav1.ConditionFalse, ReasonCertificateInvalid,
				"Secret proxy-ns/cluster-proxy-user-serving-cert has no tls.crt", second)},
		},
		"a configured host and port": {
			world: ProxyWorld{Configuration: config, Certificate: certificate("proxy-ns", ca), Endpoint: Endpoint{Host: "proxy.example.com", Port: 443}},
			want: Desired{Entry: &cpv1alpha1.AccessProvider{Name: ProxyEntryName, Cluster: clientcmdv1.Cluster{
				Server: "https://proxy.example.com:443/c1", CertificateAuthorityData: []byte("CA"),
				Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}},
				Condition: proxyAccess(metav1.ConditionTrue, ReasonUserServerConfigured,
					"Reachable through cluster-proxy's user server at https://proxy.example.com:443/c1", second)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ProxyDesired(tc.world, "c1", tc.existing, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirectEntry(t *testing.T) {
	deleting := utiltesting.MakeManagedCluster("c1").Obj()
	deleting.DeletionTimestamp = &earlier
	withConfig := func(configs ...clusterv1.ClientConfig) *clusterv1.ManagedCluster {
		mc := utiltesting.MakeManagedCluster("c1").Obj()
		mc.Spec.ManagedClusterClientConfigs = configs
		return mc
	}
	cases := map[string]struct {
		cluster *clusterv1.ManagedCluster
		want    *cpv1alpha1.AccessProvider
	}{
		"the first client config": {
			cluster: withConfig(clusterv1.ClientConfig{URL: "https://api.c1:6443", CABundle: utiltesting.FakeCA("CA")},
				clusterv1.ClientConfig{URL: "https://other:6443"}),
			want: &cpv1alpha1.AccessProvider{Name: "direct", Cluster: clientcmdv1.Cluster{Server: "https://api.c1:6443",
				CertificateAuthorityData: utiltesting.FakeCA("CA"), Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}},
		},
		"no client config":              {cluster: withConfig()},
		"a client config without a URL": {cluster: withConfig(clusterv1.ClientConfig{CABundle: utiltesting.FakeCA("CA")})},
		"a cluster being deleted":       {cluster: deleting},
		"no cluster":                    {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DirectEntry("direct", tc.cluster)); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirectDesiredRefusesUnsafeClientConfigs(t *testing.T) {
	now := utiltesting.ConditionTime.Time
	withConfig := func(url string, ca []byte) *clusterv1.ManagedCluster {
		mc := utiltesting.MakeManagedCluster("c1").Obj()
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: url, CABundle: ca}}
		return mc
	}
	refused := func(message string) Desired {
		return Desired{Condition: &metav1.Condition{Type: ConditionDirectAccess, Status: metav1.ConditionFalse,
			Reason: ReasonClientConfigRefused, Message: message, LastTransitionTime: utiltesting.ConditionTime}}
	}
	badURL := func(url string) Desired {
		return refused(`The ManagedCluster's first client config URL "` + url + `" is not an absolute https:// URL; no direct entry is published`)
	}
	notPEM := refused("The ManagedCluster's first client config CA bundle is not PEM-encoded certificates; no direct entry is published")
	notOnlyCertificates := refused(`The ManagedCluster's first client config CA bundle holds a PEM block of type "PRIVATE KEY", not only certificates; no direct entry is published`)
	twoCAs := append(utiltesting.FakeCA("a"), utiltesting.FakeCA("b")...)
	cases := map[string]struct {
		cluster *clusterv1.ManagedCluster
		want    Desired
	}{
		"https and a PEM bundle": {cluster: withConfig("https://api.c1:6443", twoCAs), want: Desired{Entry: &cpv1alpha1.AccessProvider{
			Name: "direct", Cluster: clientcmdv1.Cluster{Server: "https://api.c1:6443", CertificateAuthorityData: twoCAs,
				Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}}}},
		"https and no bundle (system roots)": {cluster: withConfig("https://api.c1", nil), want: Desired{Entry: &cpv1alpha1.AccessProvider{
			Name: "direct", Cluster: clientcmdv1.Cluster{Server: "https://api.c1",
				Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}}}},
		"http://": {cluster: withConfig("http://api.c1:6443", nil),
			want: refused(`The ManagedCluster's first client config URL "http://api.c1:6443" uses http, not https; no direct entry is published`)},
		"a host Kueue refuses": {cluster: withConfig("https://api_c1.example.com", nil),
			want: refused(`The ManagedCluster's first client config URL "https://api_c1.example.com" has a host that is neither an IP address nor a DNS-1123 name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); no direct entry is published`)},
		"an IP address": {cluster: withConfig("https://10.0.0.1:6443", nil), want: Desired{Entry: &cpv1alpha1.AccessProvider{
			Name: "direct", Cluster: clientcmdv1.Cluster{Server: "https://10.0.0.1:6443",
				Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")}}}}},
		"a relative URL":    {cluster: withConfig("api.c1:6443/x", nil), want: badURL("api.c1:6443/x")},
		"a path only":       {cluster: withConfig("/clusters/c1", nil), want: badURL("/clusters/c1")},
		"no host":           {cluster: withConfig("https:///c1", nil), want: badURL("https:///c1")},
		"a CA that is text": {cluster: withConfig("https://api.c1", []byte("CA")), want: notPEM},
		"a private key":     {cluster: withConfig("https://api.c1", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("k")})), want: notOnlyCertificates},
		"PEM then garbage":  {cluster: withConfig("https://api.c1", append(utiltesting.FakeCA("a"), "garbage"...)), want: notPEM},
		"no client config":  {cluster: utiltesting.MakeManagedCluster("c1").Obj()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DirectDesired("direct", tc.cluster, nil, now)); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
		})
	}
}
