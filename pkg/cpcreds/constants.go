package cpcreds

// The contract between the credential syncer (which writes the Secret on the
// hub) and cp-creds (which reads it in a consumer's pod). Both import these so
// the two sides cannot drift apart.
const (
	// SecretKeyToken holds the ManagedServiceAccount token.
	SecretKeyToken = "token"
	// SecretKeyCA holds the managed cluster's CA bundle. cp-creds does not use
	// it: the consumer takes the CA from the ClusterProfile's access provider.
	SecretKeyCA = "ca.crt"

	// AnnotationTokenExpiration carries the token's expiry (RFC 3339), copied
	// from the ManagedServiceAccount's status.expirationTimestamp, so that
	// cp-creds can tell client-go when to run it again.
	AnnotationTokenExpiration = "authentication.open-cluster-management.io/token-expiration"

	// LabelSyncToClusterProfile, set to "true" on a ManagedServiceAccount, asks
	// the syncer to copy its token next to the cluster's ClusterProfiles.
	LabelSyncToClusterProfile = "authentication.open-cluster-management.io/sync-to-clusterprofile"

	// AnnotationSourceCluster and AnnotationSourceManagedServiceAccount name
	// the cluster and the ManagedServiceAccount a synced Secret holds the token
	// of. The Secret's name alone is ambiguous (cluster a + MSA b-c and cluster
	// a-b + MSA c both give a-b-c), so cp-creds checks them before handing out
	// a token.
	AnnotationSourceCluster               = "authentication.open-cluster-management.io/synced-from-cluster"
	AnnotationSourceManagedServiceAccount = "authentication.open-cluster-management.io/synced-from-managed-serviceaccount"

	// AnnotationPublishedServers, on a copy, records the servers (and their
	// CAs) that this bundle's access entries publish for the copy's cluster,
	// as JSON (see PublishedServer). cp-creds sends the token only to one of
	// them. Like every mark of a copy, only the syncer may write it.
	AnnotationPublishedServers = "clusterprofile.open-cluster-management.io/published-servers"

	// AnnotationConsumerNamespaces, on a ManagedServiceAccount, names the
	// consumer namespaces that may receive its token: a comma-separated list
	// of namespace names, no wildcards. Its owner (whoever may write
	// ManagedServiceAccounts in the cluster's hub namespace) decides.
	AnnotationConsumerNamespaces = "clusterprofile.open-cluster-management.io/consumer-namespaces"

	// AnnotationUpstreamCopy, "true" on a copy, says that managed-serviceaccount's
	// own syncer wrote it while this bundle's syncer yielded to it: this
	// bundle only vouched for it with its marks.
	AnnotationUpstreamCopy = "clusterprofile.open-cluster-management.io/upstream-copy"

	// AnnotationUnscoped, "true" on a copy, says that its ManagedServiceAccount
	// names no consumer namespaces and the hub copies unscoped tokens into
	// every namespace that serves the cluster: other consumers there can use it.
	AnnotationUnscoped = "clusterprofile.open-cluster-management.io/unscoped"
)

// PluginName prefixes every line cp-creds writes on stderr.
const PluginName = "cp-creds"

// SecretName is the name of the synced Secret holding the token of
// ManagedServiceAccount msa for cluster.
func SecretName(cluster, msa string) string {
	return cluster + "-" + msa
}
