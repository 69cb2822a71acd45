package accessprovider

import (
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

const (
	// ProxyFieldManager owns the cluster-proxy entry and its condition.
	ProxyFieldManager = fieldmanager.Prefix + "access-proxy"
	// DirectFieldManager owns the direct entry.
	DirectFieldManager = fieldmanager.Prefix + "access-direct"

	// ProxyEntryName is the access provider name consumers configure for
	// cp-creds (the name in OCM's guide and in MultiKueue's example).
	ProxyEntryName = "open-cluster-management"
	// DefaultDirectEntryName names the direct entry unless configured.
	DefaultDirectEntryName = "open-cluster-management-direct"

	// cluster-proxy's fixed names.
	ProxyConfigurationName = "cluster-proxy"
	UserServerSecretName   = "cluster-proxy-user-serving-cert"
	UserServerServiceName  = "cluster-proxy-addon-user"
	UserServerCAKey        = "tls.crt"
	DefaultUserServerPort  = 9092

	// ConditionClusterProxyAccess tells consumers whether the cluster-proxy
	// entry is there and, when it is not, why.
	ConditionClusterProxyAccess = "ClusterProxyAccess"

	ReasonUserServerConfigured   = "UserServerConfigured"
	ReasonConfigurationMissing   = "ProxyConfigurationMissing"
	ReasonCertificateMissing     = "UserServerCertificateMissing"
	ReasonCertificateInvalid     = "UserServerCertificateInvalid"
	ReasonConfigurationNamespace = "ProxyServerNamespaceMissing"

	// ConditionDirectAccess is False, saying why, while the cluster's client
	// config cannot make a safe direct entry; absent otherwise.
	ConditionDirectAccess     = "DirectAccess"
	ReasonClientConfigRefused = "ClientConfigRefused"
)
