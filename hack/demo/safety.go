package main

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
)

// checkSafeOnExistingHub makes sure the demo will write nothing but its own
// objects on a hub it did not start.
func (s *scenario) checkSafeOnExistingHub(ctx context.Context, c client.Client) error {
	if err := s.checkNoneExist(ctx, c); err != nil {
		return err
	}
	return checkOnlyDemoObjectsPublished(ctx, c, s)
}

// checkOnlyDemoObjectsPublished makes sure that, on a hub the demo did not
// start, the manager would write no profile outside the demo: it mirrors
// every ManagedCluster of the hub, so real clusters in bound namespaces, or
// demo clusters picked by a set bound outside the demo (such as a global
// set), would get profiles the demo has no business writing. It works out
// what the mirror would publish once the scenario is created, before
// creating anything.
func checkOnlyDemoObjectsPublished(ctx context.Context, c client.Client, s *scenario) error {
	world, clusters, err := readWorld(ctx, c)
	if err != nil {
		return err
	}
	for _, set := range s.clusterSets() {
		world.Sets = append(world.Sets, *set)
	}
	for _, binding := range s.boundBindings() {
		world.Bindings = append(world.Bindings, *binding)
	}
	for _, ns := range []string{s.kueue, s.argocd} {
		world.Namespaces[ns] = membership.NamespaceActive
	}
	for _, spec := range s.clusters {
		clusters = append(clusters, withDefaultSetVariant(s.managedCluster(spec, false))...)
	}
	outside := sets.New[string]()
	for i := range clusters {
		cluster := &clusters[i]
		for ns := range membership.Served(cluster, world) {
			if !strings.HasPrefix(ns, existingHubPrefix) || !strings.HasPrefix(cluster.Name, existingHubPrefix) {
				outside.Insert(ns + "/" + cluster.Name)
			}
		}
	}
	if len(outside) == 0 {
		return nil
	}
	return fmt.Errorf("on this hub the manager would also publish %d ClusterProfile(s) outside the demo (%s); "+
		"the demo only writes %s* objects, so it stops before creating any. Unset KUBECONFIG to run it on a local control plane",
		outside.Len(), firstFew(sets.List(outside), 5), existingHubPrefix)
}

// withDefaultSetVariant returns the cluster as built, and the same cluster
// in the "default" set: OCM's registration hub puts clusters without a set
// label there, as cluster2 is and as cluster3 becomes when it leaves its set.
func withDefaultSetVariant(cluster *clusterv1.ManagedCluster) []clusterv1.ManagedCluster {
	inDefault := cluster.DeepCopy()
	inDefault.Labels[clusterv1beta2.ClusterSetLabel] = "default"
	return []clusterv1.ManagedCluster{*cluster, *inDefault}
}

// readWorld reads what decides where clusters are published.
func readWorld(ctx context.Context, c client.Client) (membership.World, []clusterv1.ManagedCluster, error) {
	world := membership.World{Namespaces: map[string]membership.NamespaceState{}}
	setList := &clusterv1beta2.ManagedClusterSetList{}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	namespaces := &corev1.NamespaceList{}
	clusters := &clusterv1.ManagedClusterList{}
	for _, list := range []client.ObjectList{setList, bindings, namespaces, clusters} {
		if err := c.List(ctx, list); err != nil {
			return world, nil, fmt.Errorf("reading the hub (%T): %w", list, err)
		}
	}
	world.Sets, world.Bindings = setList.Items, bindings.Items
	for _, ns := range namespaces.Items {
		world.Namespaces[ns.Name] = membership.NamespaceActive
		if !ns.DeletionTimestamp.IsZero() {
			world.Namespaces[ns.Name] = membership.NamespaceTerminating
		}
	}
	return world, clusters.Items, nil
}

func firstFew(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
