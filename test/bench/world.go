package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

const (
	setName = "bench-all"
	// setupWorkers create the world; enough to keep the API server busy.
	setupWorkers = 32
)

// world is the hub the benchmark builds: every cluster is in one set (an
// empty label selector picks all), bound into every bench namespace.
type world struct {
	clusters   []*clusterv1.ManagedCluster
	namespaces []string
	set        *clusterv1beta2.ManagedClusterSet
	// status is, by cluster name, the status the mirror must write on each of
	// the cluster's profiles.
	status map[string]mirror.Status
	bundle bundleWorld
	// owned is what the capabilities that own objects of their own read.
	owned ownedWorld
}

// Claims a cluster may have; cluster i gets the first 3 + i%3 of them.
var claimNames = []string{
	"id.k8s.io",
	"region.open-cluster-management.io",
	"platform.open-cluster-management.io",
	"product.open-cluster-management.io",
	"kubeversion.open-cluster-management.io",
}

var regions = []string{"eu-west", "eu-central", "us-east", "ap-south"}

func newWorld(cfg config) *world {
	clusters, namespaces := cfg.clusters, cfg.namespaces
	w := &world{
		set:    utiltesting.MakeClusterSet(setName).Selector(metav1.LabelSelector{}).Obj(),
		status: make(map[string]mirror.Status, clusters),
		bundle: newBundleWorld(cfg.gates, clusters, cfg.msas),
		owned:  newOwnedWorld(cfg.gates, clusters, namespaces),
	}
	for i := range namespaces {
		w.namespaces = append(w.namespaces, fmt.Sprintf("bench-%03d", i))
	}
	for i := range clusters {
		c := newCluster(i)
		if cfg.gates["direct"] {
			withClientConfig(c)
		}
		w.clusters = append(w.clusters, c)
		// The mirror's own decision function says what it will write, so the
		// floor writes and the observer expects exactly that.
		w.status[c.Name] = mirror.DesiredProfiles(c.Name, c, mirror.World{Publishing: membership.Publishing{
			Sets:       []clusterv1beta2.ManagedClusterSet{*w.set},
			Bindings:   []clusterv1beta2.ManagedClusterSetBinding{*boundBinding(w.namespaces[0])},
			Namespaces: map[string]membership.NamespaceState{w.namespaces[0]: membership.NamespaceActive},
		}}).StatusIn(w.namespaces[0])
	}
	return w
}

func newCluster(i int) *clusterv1.ManagedCluster {
	name := fmt.Sprintf("cluster-%05d", i)
	version := fmt.Sprintf("v1.%d.%d", 30+i%4, i%10)
	values := map[string]string{
		"id.k8s.io":                              name,
		"region.open-cluster-management.io":      regions[i%len(regions)],
		"platform.open-cluster-management.io":    "AWS",
		"product.open-cluster-management.io":     "OpenShift",
		"kubeversion.open-cluster-management.io": version,
	}
	b := utiltesting.MakeManagedCluster(name).Version(version).
		Available(metav1.ConditionTrue).Joined()
	for _, claim := range claimNames[:3+i%3] {
		b = b.Claim(claim, values[claim])
	}
	return b.Obj()
}

func boundBinding(namespace string) *clusterv1beta2.ManagedClusterSetBinding {
	return utiltesting.MakeBinding(namespace, setName).Bound(true).Obj()
}

func (w *world) profileCount() int { return len(w.clusters) * len(w.namespaces) }

// create makes the world in parallel: namespaces and the set, then clusters
// and bindings, each with its status written through the status subresource
// (the API server ignores status on create), as the hub's agents would; then
// what the capabilities beyond the mirror read.
func (w *world) create(ctx context.Context, c client.Client) error {
	if err := createNamespaces(ctx, c, w.namespaces); err != nil {
		return err
	}
	if err := c.Create(ctx, w.set.DeepCopy()); err != nil {
		return fmt.Errorf("creating ManagedClusterSet %s: %w", setName, err)
	}
	err := forEach(ctx, setupWorkers, len(w.clusters), func(ctx context.Context, i int) error {
		return createWithStatus(ctx, c, w.clusters[i].DeepCopy(), func(o *clusterv1.ManagedCluster) {
			o.Status = *w.clusters[i].Status.DeepCopy()
		})
	})
	if err != nil {
		return err
	}
	if err := w.createBindings(ctx, c, w.namespaces); err != nil {
		return err
	}
	if err := w.createBundle(ctx, c); err != nil {
		return err
	}
	return w.createOwned(ctx, c)
}

func (w *world) createBindings(ctx context.Context, c client.Client, namespaces []string) error {
	return forEach(ctx, setupWorkers, len(namespaces), func(ctx context.Context, i int) error {
		b := boundBinding(namespaces[i])
		return createWithStatus(ctx, c, b.DeepCopy(), func(o *clusterv1beta2.ManagedClusterSetBinding) {
			o.Status = *b.Status.DeepCopy()
		})
	})
}

func createNamespaces(ctx context.Context, c client.Client, names []string) error {
	return forEach(ctx, setupWorkers, len(names), func(ctx context.Context, i int) error {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i]}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", names[i], err)
		}
		return nil
	})
}

// createWithStatus creates obj, then sets its status and writes it.
func createWithStatus[T client.Object](ctx context.Context, c client.Client, obj T, setStatus func(T)) error {
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	setStatus(obj)
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("writing status of %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// profileWrites are the two Server-Side Applies the mirror sends to publish
// a cluster in a namespace: metadata and spec (creating it), then status.
func (w *world) profileWrites(namespace string, cluster string) (profilewrite.MetaApply, profilewrite.StatusApply) {
	key := types.NamespacedName{Namespace: namespace, Name: cluster}
	managerName := clusterprofile.DefaultManagerName
	meta := profilewrite.MetaApply{
		NamespacedName: key,
		Labels: map[string]string{
			clusterprofile.LabelClusterManager: managerName,
			clusterprofile.LabelClusterName:    cluster,
			clusterprofile.LabelClusterSet:     setName,
		},
		Spec: &cpv1alpha1.ClusterProfileSpec{
			DisplayName:    cluster,
			ClusterManager: cpv1alpha1.ClusterManager{Name: managerName},
		},
	}
	s := w.status[cluster]
	status := profilewrite.StatusApply{
		NamespacedName: key, Version: s.Version, Conditions: s.Conditions, Properties: s.Properties,
	}
	return meta, status
}
