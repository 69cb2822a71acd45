// Package cpcreds is the cp-creds exec credential plugin: run by client-go
// for a cluster published as a ClusterProfile, it reads the
// ManagedServiceAccount token that the credential syncer copied into the
// consumer's namespace and hands it back as an ExecCredential.
//
// The Provider implements cluster-inventory-api's credentialplugin.Provider;
// Run does the ExecCredential plumbing (reading KUBERNETES_EXEC_INFO, writing
// the answer) in client.authentication.k8s.io/v1 and v1beta1, where
// credentialplugin.Run speaks v1 only.
package cpcreds
