//go:build linux

package e2e

import "open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/argocdcheck"

// argoCDUser is who the docs' argocd ManagedServiceAccount is on each
// cluster: the ServiceAccount managed-serviceaccount's agent makes.
const argoCDUser = "system:serviceaccount:open-cluster-management-agent-addon:argocd"

// clusterNamed is the Argo CD cluster of that name, or none.
func clusterNamed(c argocdcheck.Clusters, name string) argocdcheck.Cluster {
	for _, cl := range c.Clusters {
		if cl.Name == name {
			return cl
		}
	}
	return argocdcheck.Cluster{}
}
