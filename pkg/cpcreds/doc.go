// Package cpcreds is the cp-creds exec credential plugin: run by client-go
// for a cluster published as a ClusterProfile, it reads the
// ManagedServiceAccount token that the credential syncer copied into the
// consumer's namespace and hands it back as an ExecCredential.
//
// The ExecCredential plumbing (reading KUBERNETES_EXEC_INFO, writing the
// answer) is cluster-inventory-api's credentialplugin.Run; this package
// supplies the Provider it runs.
package cpcreds
