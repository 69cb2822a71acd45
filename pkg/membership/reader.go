package membership

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
)

// Reader reads what Served decides from, out of the manager's cache.
type Reader struct {
	Client client.Reader
}

// ClusterPublishing reads what decides where cluster is published: every
// set, the bindings of the sets that pick the cluster, and the state of the
// namespaces of those bindings and of extraNamespaces (say, where its
// profiles are).
func (r Reader) ClusterPublishing(ctx context.Context, cluster *clusterv1.ManagedCluster, extraNamespaces []string) (Publishing, error) {
	publishing := Publishing{Namespaces: map[string]NamespaceState{}}
	if cluster != nil && cluster.DeletionTimestamp.IsZero() {
		setList := &clusterv1beta2.ManagedClusterSetList{}
		if err := r.Client.List(ctx, setList, client.UnsafeDisableDeepCopy); err != nil {
			return publishing, fmt.Errorf("listing ManagedClusterSets: %w", err)
		}
		publishing.Sets = setList.Items
		for _, setName := range MemberSets(cluster, publishing.Sets) {
			bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
			if err := r.Client.List(ctx, bindings, client.MatchingFields{BindingClusterSetKey: setName}, client.UnsafeDisableDeepCopy); err != nil {
				return publishing, fmt.Errorf("listing bindings of ManagedClusterSet %s: %w", setName, err)
			}
			publishing.Bindings = append(publishing.Bindings, bindings.Items...)
		}
	}
	namespaces := make([]string, 0, len(publishing.Bindings)+len(extraNamespaces))
	for _, b := range publishing.Bindings {
		namespaces = append(namespaces, b.Namespace)
	}
	return publishing, r.readNamespaces(ctx, publishing.Namespaces, append(namespaces, extraNamespaces...))
}

// Serves tells whether namespace publishes the cluster named clusterName.
// It reads only that namespace's bindings and their sets.
func (r Reader) Serves(ctx context.Context, namespace, clusterName string) (bool, error) {
	cluster, err := r.Cluster(ctx, clusterName)
	if err != nil || cluster == nil || !cluster.DeletionTimestamp.IsZero() {
		return false, err
	}
	publishing, err := r.NamespacePublishing(ctx, namespace)
	if err != nil {
		return false, err
	}
	return ServedIn(cluster, publishing, namespace), nil
}

// NamespacePublishing reads what decides which clusters namespace
// publishes: its bindings that publish (see Publishes), their sets, and
// its state. Served(cluster, publishing) then answers for any cluster; no
// binding means the namespace publishes none.
func (r Reader) NamespacePublishing(ctx context.Context, namespace string) (Publishing, error) {
	publishing := Publishing{Namespaces: map[string]NamespaceState{}}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return publishing, fmt.Errorf("listing ManagedClusterSetBindings in %s: %w", namespace, err)
	}
	for i := range bindings.Items {
		binding := &bindings.Items[i]
		if !Publishes(binding) {
			continue
		}
		set, err := optional.Get(ctx, r.Client, types.NamespacedName{Name: binding.Spec.ClusterSet}, &clusterv1beta2.ManagedClusterSet{})
		if err != nil {
			return publishing, fmt.Errorf("reading ManagedClusterSet %s: %w", binding.Spec.ClusterSet, err)
		}
		if set == nil {
			continue
		}
		publishing.Sets = append(publishing.Sets, *set)
		publishing.Bindings = append(publishing.Bindings, *binding)
	}
	if len(publishing.Bindings) == 0 {
		return publishing, nil
	}
	return publishing, r.readNamespaces(ctx, publishing.Namespaces, []string{namespace})
}

// ServesProfile tells whether p is a profile the hub publishes: one of
// managerName (spec.clusterManager.name, which is immutable), not being
// deleted, named after a cluster that its namespace serves. Nothing else
// about p counts: its labels are whatever its creator wrote.
func (r Reader) ServesProfile(ctx context.Context, p *cpv1alpha1.ClusterProfile, managerName string) (bool, error) {
	if p == nil || !p.DeletionTimestamp.IsZero() || p.Spec.ClusterManager.Name != managerName {
		return false, nil
	}
	return r.Serves(ctx, p.Namespace, p.Name)
}

// Cluster returns the named ManagedCluster, nil when it does not exist.
func (r Reader) Cluster(ctx context.Context, name string) (*clusterv1.ManagedCluster, error) {
	cluster, err := optional.Get(ctx, r.Client, types.NamespacedName{Name: name}, &clusterv1.ManagedCluster{})
	if err != nil {
		return nil, fmt.Errorf("reading ManagedCluster %s: %w", name, err)
	}
	return cluster, nil
}

func (r Reader) readNamespaces(ctx context.Context, into map[string]NamespaceState, names []string) error {
	for _, ns := range names {
		if _, known := into[ns]; known {
			continue
		}
		state, err := r.NamespaceState(ctx, ns)
		if err != nil {
			return err
		}
		into[ns] = state
	}
	return nil
}

// NamespaceState reads namespace metadata only (the informer behind it holds
// no more than that): deletion and the LabelClusterNamespace label.
func (r Reader) NamespaceState(ctx context.Context, name string) (NamespaceState, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	err := r.Client.Get(ctx, types.NamespacedName{Name: name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		return NamespaceMissing, nil
	case err != nil:
		return NamespaceMissing, fmt.Errorf("reading Namespace %s: %w", name, err)
	case !ns.DeletionTimestamp.IsZero():
		return NamespaceTerminating, nil
	case IsClusterNamespace(ns):
		return NamespaceOfCluster, nil
	}
	return NamespaceActive, nil
}

// IsClusterNamespace tells whether a namespace is labelled as a
// ManagedCluster's own (LabelClusterNamespace, any value).
func IsClusterNamespace(ns metav1.Object) bool {
	_, ok := ns.GetLabels()[LabelClusterNamespace]
	return ok
}
