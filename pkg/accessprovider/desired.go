package accessprovider

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// Desired is what one source wants in a profile's status. The zero value
// wants nothing, which removes whatever the source wrote before.
type Desired struct {
	Entry     *cpv1alpha1.AccessProvider
	Condition *metav1.Condition
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

// ProxyEntry is the entry that reaches a cluster through cluster-proxy's user
// server, which forwards the consumer's bearer token to the cluster.
func ProxyEntry(cluster string, endpoint Endpoint, proxyNamespace string, ca []byte) cpv1alpha1.AccessProvider {
	return cpv1alpha1.AccessProvider{
		Name: ProxyEntryName,
		Cluster: clientcmdv1.Cluster{
			Server:                   endpoint.ProxyServer(proxyNamespace, cluster),
			CertificateAuthorityData: ca,
			Extensions:               []clientcmdv1.NamedExtension{execExtension(cluster)},
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
			Extensions:               []clientcmdv1.NamedExtension{execExtension(cluster.Name)},
		},
	}
}

// execExtension carries the cluster name to the consumer's exec plugin
// (cp-creds), which picks the token synced for that cluster.
func execExtension(cluster string) clientcmdv1.NamedExtension {
	raw, _ := json.Marshal(map[string]string{"clusterName": cluster}) // a map of strings always marshals
	return clientcmdv1.NamedExtension{Name: ExecExtensionName, Extension: runtime.RawExtension{Raw: raw}}
}

func proxyCondition(status metav1.ConditionStatus, reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: ConditionClusterProxyAccess, Status: status, Reason: reason, Message: message}
}
