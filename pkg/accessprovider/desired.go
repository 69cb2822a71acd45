package accessprovider

import (
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// Desired is what one source wants in a profile's status. The zero value
// wants nothing, which removes whatever the source wrote before.
type Desired struct {
	Entry     *cpv1alpha1.AccessProvider
	Condition *metav1.Condition
}

// status is the source's share of profile's status.
func (d Desired) status(profile *cpv1alpha1.ClusterProfile) profilewrite.StatusApply {
	status := profilewrite.StatusApply{NamespacedName: types.NamespacedName{Namespace: profile.Namespace, Name: profile.Name}}
	if d.Entry != nil {
		status.AccessProviders = []cpv1alpha1.AccessProvider{*d.Entry}
	}
	if d.Condition != nil {
		status.Conditions = []metav1.Condition{*d.Condition}
	}
	return status
}

// Endpoint is where cluster-proxy's user server is reached.
type Endpoint struct {
	// Host overrides the default cluster-proxy-addon-user.<proxy namespace>.
	Host string
	Port int
}

// ProxyServer returns the user server URL for a cluster.
func (e Endpoint) ProxyServer(proxyNamespace, cluster string) string {
	host := e.Host
	if host == "" {
		host = UserServerServiceName + "." + proxyNamespace
	}
	port := e.Port
	if port == 0 {
		port = DefaultUserServerPort
	}
	return fmt.Sprintf("https://%s/%s", net.JoinHostPort(host, strconv.Itoa(port)), cluster)
}

// ProxyWorld is what the cluster-proxy entry is made from: the
// ManagedProxyConfiguration and the user server's certificate Secret, nil
// when missing.
type ProxyWorld struct {
	Configuration *proxyv1alpha1.ManagedProxyConfiguration
	Certificate   *corev1.Secret
	Endpoint      Endpoint
}

// ProxyDesired is the entry that reaches cluster through cluster-proxy's
// user server, which forwards the consumer's bearer token to the cluster,
// and a True ClusterProxyAccess condition; or, when something is missing, no
// entry and a False condition saying what. existing are the profile's
// conditions: an unchanged condition keeps its transition time.
func ProxyDesired(world ProxyWorld, cluster string, existing []metav1.Condition, now time.Time) Desired {
	var want Desired
	switch {
	case world.Configuration == nil:
		want.Condition = proxyCondition(metav1.ConditionFalse, ReasonConfigurationMissing,
			fmt.Sprintf("ManagedProxyConfiguration %q not found: is the cluster-proxy addon installed?", ProxyConfigurationName))
	case world.Configuration.Spec.ProxyServer.Namespace == "":
		want.Condition = proxyCondition(metav1.ConditionFalse, ReasonConfigurationNamespace,
			fmt.Sprintf("ManagedProxyConfiguration %q has no spec.proxyServer.namespace", ProxyConfigurationName))
	case world.Certificate == nil:
		want.Condition = proxyCondition(metav1.ConditionFalse, ReasonCertificateMissing,
			fmt.Sprintf("Secret %s/%s not found: is cluster-proxy's user server enabled (userServer.enabled=true)?",
				world.Configuration.Spec.ProxyServer.Namespace, UserServerSecretName))
	case len(world.Certificate.Data[UserServerCAKey]) == 0:
		want.Condition = proxyCondition(metav1.ConditionFalse, ReasonCertificateInvalid,
			fmt.Sprintf("Secret %s/%s has no %s", world.Certificate.Namespace, UserServerSecretName, UserServerCAKey))
	default:
		entry := ProxyEntry(cluster, world.Endpoint, world.Configuration.Spec.ProxyServer.Namespace, world.Certificate.Data[UserServerCAKey])
		want.Entry = &entry
		want.Condition = proxyCondition(metav1.ConditionTrue, ReasonUserServerConfigured,
			"Reachable through cluster-proxy's user server at "+entry.Cluster.Server)
	}
	want.Condition = stable(existing, *want.Condition, now)
	return want
}

// stable gives c the transition time it should carry: the existing
// condition's when its status did not change (so an unchanged condition is
// not a change), else now at the second precision the API server stores.
func stable(existing []metav1.Condition, c metav1.Condition, now time.Time) *metav1.Condition {
	conditions := []metav1.Condition{}
	if old := meta.FindStatusCondition(existing, c.Type); old != nil {
		conditions = append(conditions, *old)
	}
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(&conditions, c)
	return meta.FindStatusCondition(conditions, c.Type)
}

// ProxyEntry is the entry that reaches a cluster through cluster-proxy's
// user server, with the user server's certificate as CA.
func ProxyEntry(cluster string, endpoint Endpoint, proxyNamespace string, ca []byte) cpv1alpha1.AccessProvider {
	return cpv1alpha1.AccessProvider{
		Name: ProxyEntryName,
		Cluster: clientcmdv1.Cluster{
			Server:                   endpoint.ProxyServer(proxyNamespace, cluster),
			CertificateAuthorityData: ca,
			Extensions:               []clientcmdv1.NamedExtension{cpcreds.ExecExtension(cluster)},
		},
	}
}

// DirectEntry is the entry that reaches a cluster's API server directly, from
// the first client config the cluster registered; nil when it has none.
func DirectEntry(name string, cluster *clusterv1.ManagedCluster) *cpv1alpha1.AccessProvider {
	if cluster == nil || !cluster.DeletionTimestamp.IsZero() || len(cluster.Spec.ManagedClusterClientConfigs) == 0 {
		return nil
	}
	config := cluster.Spec.ManagedClusterClientConfigs[0]
	if config.URL == "" {
		return nil
	}
	return &cpv1alpha1.AccessProvider{
		Name: name,
		Cluster: clientcmdv1.Cluster{
			Server:                   config.URL,
			CertificateAuthorityData: config.CABundle,
			Extensions:               []clientcmdv1.NamedExtension{cpcreds.ExecExtension(cluster.Name)},
		},
	}
}

// DirectDesired is the direct entry, or, when the cluster's client config
// would make an unsafe or unusable one (a URL that is not an absolute
// https:// URL would carry the consumer's token in clear or nowhere, a host
// Kueue refuses; a CA bundle that is not certificates fails every TLS
// handshake), no entry
// and a False DirectAccess condition saying why, as the proxy entry refuses
// what it cannot use.
func DirectDesired(name string, cluster *clusterv1.ManagedCluster, existing []metav1.Condition, now time.Time) Desired {
	entry := DirectEntry(name, cluster)
	if entry == nil {
		return Desired{}
	}
	if problem := clientConfigProblem(entry.Cluster); problem != "" {
		return Desired{Condition: stable(existing, metav1.Condition{Type: ConditionDirectAccess, Status: metav1.ConditionFalse,
			Reason: ReasonClientConfigRefused, Message: problem}, now)}
	}
	return Desired{Entry: entry}
}

// clientConfigProblem holds a cluster's client config to the rules of an
// entry (clusterprofile.ServerProblem, CertificateAuthorityBlocks); an empty
// CA bundle is allowed (the consumer trusts its system roots).
func clientConfigProblem(c clientcmdv1.Cluster) string {
	if problem := clusterprofile.ServerProblem(c.Server); problem != "" {
		return fmt.Sprintf("The ManagedCluster's first client config URL %s; no direct entry is published", problem)
	}
	if len(c.CertificateAuthorityData) == 0 {
		return ""
	}
	if _, problem := clusterprofile.CertificateAuthorityBlocks(c.CertificateAuthorityData); problem != "" {
		return fmt.Sprintf("The ManagedCluster's first client config CA bundle %s; no direct entry is published", problem)
	}
	return ""
}

func proxyCondition(status metav1.ConditionStatus, reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: ConditionClusterProxyAccess, Status: status, Reason: reason, Message: message}
}
