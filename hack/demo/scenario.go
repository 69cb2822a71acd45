package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// Well-known OCM cluster claim names.
const (
	claimRegion   = "region.open-cluster-management.io"
	claimPlatform = "platform.open-cluster-management.io"
	claimProduct  = "product.open-cluster-management.io"
)

// clusterSpec is one ManagedCluster of the scenario, as the demo means it to be.
type clusterSpec struct {
	name    string
	version string
	// exclusiveSet is the set the cluster joins by label; empty for none.
	exclusiveSet string
	env          string
	claims       []clusterv1.ManagedClusterClaim
	// available is the ManagedClusterConditionAvailable the cluster reports.
	available metav1.Condition
}

// scenario is the fleet the demo publishes, and where the mirror should put
// each cluster's profile. Live changes update both the hub and this model.
type scenario struct {
	kueue, argocd string // namespaces of the consumers
	gpu, prod     string // sets
	// envLabel is the label the prod set selects on.
	envLabel string
	clusters []*clusterSpec
	// profiles maps each expected profile to its clusterset label.
	profiles map[types.NamespacedName]string
	bindings []bindingSpec
}

// bindingSpec binds a set into a namespace.
type bindingSpec struct{ namespace, set string }

// newScenario names every object with prefix; on a hub the demo did not
// start, the set selects on a prefixed label too so it picks no real cluster.
func newScenario(prefix string) *scenario {
	name := func(s string) string { return prefix + s }
	s := &scenario{
		kueue: name("kueue-system"), argocd: name("argocd"),
		gpu: name("gpu"), prod: name("prod"),
		envLabel: name("env"),
	}
	s.clusters = []*clusterSpec{
		newClusterSpec(name("cluster1"), "v1.33.5", s.gpu, "prod", "us-east-1", "AWS", "EKS"),
		newClusterSpec(name("cluster2"), "v1.34.2", "", "prod", "europe-west1", "GCP", "GKE"),
		newClusterSpec(name("cluster3"), "v1.35.0", s.gpu, "dev", "eastus", "Azure", "AKS"),
	}
	c1, c2, c3 := s.clusters[0].name, s.clusters[1].name, s.clusters[2].name
	s.bindings = []bindingSpec{{s.kueue, s.gpu}, {s.kueue, s.prod}, {s.argocd, s.prod}}
	// cluster1 is in gpu and in prod, both bound into kueue-system: it gets
	// one profile there, labelled with its own exclusive set.
	s.profiles = map[types.NamespacedName]string{
		{Namespace: s.kueue, Name: c1}:  s.gpu,
		{Namespace: s.kueue, Name: c2}:  s.prod,
		{Namespace: s.kueue, Name: c3}:  s.gpu,
		{Namespace: s.argocd, Name: c1}: s.prod,
		{Namespace: s.argocd, Name: c2}: s.prod,
	}
	return s
}

func newClusterSpec(name, version, exclusiveSet, env, region, platform, product string) *clusterSpec {
	return &clusterSpec{
		name: name, version: version, exclusiveSet: exclusiveSet, env: env,
		claims: []clusterv1.ManagedClusterClaim{
			{Name: claimRegion, Value: region}, {Name: claimPlatform, Value: platform}, {Name: claimProduct, Value: product},
		},
		available: metav1.Condition{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
			Reason: "ManagedClusterAvailable", Message: "Managed cluster is available",
		},
	}
}

func (s *scenario) cluster(name string) *clusterSpec {
	for _, c := range s.clusters {
		if c.name == name {
			return c
		}
	}
	return nil
}

// create writes the scenario to the hub, narrating. On a hub the demo did
// not start it registers the deletion of its objects first, so that they go
// however the demo ends.
func (s *scenario) create(ctx context.Context, h *hub, cleanups *cleanupStack) error {
	if h.existing {
		cleanups.push(fmt.Sprintf("deleting the %s* objects", h.prefix), func() error { return s.delete(h.client) })
	}
	fmt.Println("\nCreating the scenario:")
	for _, ns := range []string{s.kueue, s.argocd} {
		if err := h.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	fmt.Printf("  namespaces %s and %s, where Kueue and Argo CD would look for ClusterProfiles\n", s.kueue, s.argocd)
	if err := s.createClusters(ctx, h); err != nil {
		return err
	}
	if err := s.createSets(ctx, h.client); err != nil {
		return err
	}
	return s.createBindings(ctx, h.client)
}

func (s *scenario) createClusters(ctx context.Context, h *hub) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, spec := range s.clusters {
		if err := createCluster(ctx, h.client, s.managedCluster(spec, !h.existing)); err != nil {
			return err
		}
		fmt.Fprintf(w, "  ManagedCluster %s\tlabels %s\tKubernetes %s, claims %s; Joined, Available\n",
			spec.name, s.labelText(spec), spec.version, claimsText(spec.claims))
	}
	return w.Flush()
}

// managedCluster builds the ManagedCluster of spec. On a hub the demo did
// not start, hubAcceptsClient stays false so that a running OCM
// registration hub leaves the fake cluster alone (no namespace, RBAC or
// lease checks); the mirror does not look at it.
func (s *scenario) managedCluster(spec *clusterSpec, accepted bool) *clusterv1.ManagedCluster {
	w := utiltesting.MakeManagedCluster(spec.name).Label(s.envLabel, spec.env).Version(spec.version).Joined()
	if spec.exclusiveSet != "" {
		w.ClusterSet(spec.exclusiveSet)
	}
	for _, claim := range spec.claims {
		w.Claim(claim.Name, claim.Value)
	}
	w.Condition(spec.available.Type, spec.available.Status, spec.available.Reason, spec.available.Message)
	cluster := w.Obj()
	cluster.Spec.HubAcceptsClient = accepted
	// The builders use a fixed time, which suits tests; show real ones here.
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for i := range cluster.Status.Conditions {
		cluster.Status.Conditions[i].LastTransitionTime = now
	}
	return cluster
}

func (s *scenario) labelText(spec *clusterSpec) string {
	text := s.envLabel + "=" + spec.env
	if spec.exclusiveSet != "" {
		text = "clusterset=" + spec.exclusiveSet + " " + text
	}
	return text
}

func claimsText(claims []clusterv1.ManagedClusterClaim) string {
	parts := make([]string, 0, len(claims))
	for _, c := range claims {
		parts = append(parts, strings.TrimSuffix(c.Name, ".open-cluster-management.io")+"="+c.Value)
	}
	return strings.Join(parts, " ")
}

// createCluster creates the cluster and then writes its status, which a
// create ignores, through the status subresource, as the agent would.
func createCluster(ctx context.Context, c client.Client, cluster *clusterv1.ManagedCluster) error {
	status := cluster.Status.DeepCopy()
	if err := c.Create(ctx, cluster); err != nil {
		return fmt.Errorf("creating ManagedCluster %s: %w", cluster.Name, err)
	}
	return updateClusterStatus(ctx, c, cluster.Name, func(mc *clusterv1.ManagedCluster) { mc.Status = *status })
}

// clusterSets builds the scenario's two sets.
func (s *scenario) clusterSets() []*clusterv1beta2.ManagedClusterSet {
	gpu := utiltesting.MakeClusterSet(s.gpu).Obj()
	prod := utiltesting.MakeClusterSet(s.prod).Selector(metav1.LabelSelector{
		MatchLabels: map[string]string{s.envLabel: "prod"},
	}).Obj()
	return []*clusterv1beta2.ManagedClusterSet{gpu, prod}
}

// boundBindings builds the scenario's bindings with their Bound condition.
func (s *scenario) boundBindings() []*clusterv1beta2.ManagedClusterSetBinding {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	var bindings []*clusterv1beta2.ManagedClusterSetBinding
	for _, b := range s.bindings {
		binding := utiltesting.MakeBinding(b.namespace, b.set).Bound(true).Obj()
		binding.Status.Conditions[0].LastTransitionTime = now
		bindings = append(bindings, binding)
	}
	return bindings
}

func (s *scenario) createSets(ctx context.Context, c client.Client) error {
	for _, set := range s.clusterSets() {
		if err := c.Create(ctx, set); err != nil {
			return fmt.Errorf("creating ManagedClusterSet %s: %w", set.Name, err)
		}
	}
	fmt.Printf("  ManagedClusterSet %s: ExclusiveClusterSetLabel, clusters labelled %s=%s\n", s.gpu, clusterv1beta2.ClusterSetLabel, s.gpu)
	fmt.Printf("  ManagedClusterSet %s: LabelSelector, clusters labelled %s=prod\n", s.prod, s.envLabel)
	return nil
}

func (s *scenario) createBindings(ctx context.Context, c client.Client) error {
	for _, binding := range s.boundBindings() {
		if err := createBinding(ctx, c, binding); err != nil {
			return err
		}
		fmt.Printf("  ManagedClusterSetBinding %s -> namespace %s\n", binding.Spec.ClusterSet, binding.Namespace)
	}
	fmt.Println("  No OCM registration hub runs here, so the demo sets each binding's condition Bound=True itself,")
	fmt.Println("  as OCM's ManagedClusterSetBinding controller would.")
	return nil
}

// createBinding creates a binding and then writes its status, retrying on
// conflicts in case a real binding controller writes the status too.
func createBinding(ctx context.Context, c client.Client, binding *clusterv1beta2.ManagedClusterSetBinding) error {
	status := binding.Status.DeepCopy()
	if err := c.Create(ctx, binding); err != nil {
		return fmt.Errorf("creating ManagedClusterSetBinding %s/%s: %w", binding.Namespace, binding.Name, err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(binding), binding); err != nil {
			return err
		}
		binding.Status = *status
		return c.Status().Update(ctx, binding)
	})
	if err != nil {
		return fmt.Errorf("marking ManagedClusterSetBinding %s/%s Bound: %w", binding.Namespace, binding.Name, err)
	}
	return nil
}

// updateCluster changes a cluster's metadata or spec, retrying on conflicts.
func updateCluster(ctx context.Context, c client.Client, name string, mutate func(*clusterv1.ManagedCluster)) error {
	return mutateCluster(ctx, c, name, false, mutate)
}

// updateClusterStatus changes a cluster's status, retrying on conflicts.
func updateClusterStatus(ctx context.Context, c client.Client, name string, mutate func(*clusterv1.ManagedCluster)) error {
	return mutateCluster(ctx, c, name, true, mutate)
}

func mutateCluster(ctx context.Context, c client.Client, name string, status bool, mutate func(*clusterv1.ManagedCluster)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, cluster); err != nil {
			return err
		}
		mutate(cluster)
		if status {
			return c.Status().Update(ctx, cluster)
		}
		return c.Update(ctx, cluster)
	})
	if err != nil {
		return fmt.Errorf("updating ManagedCluster %s: %w", name, err)
	}
	return nil
}

// objects lists every object the scenario creates, bindings first so that
// deleting in this order unpublishes before removing the rest.
func (s *scenario) objects() []client.Object {
	var objs []client.Object
	for _, b := range s.bindings {
		objs = append(objs, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: b.namespace, Name: b.set}})
	}
	for _, set := range []string{s.gpu, s.prod} {
		objs = append(objs, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}})
	}
	for _, spec := range s.clusters {
		objs = append(objs, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: spec.name}})
	}
	for _, ns := range []string{s.kueue, s.argocd} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	return objs
}

// checkNoneExist refuses to touch objects that the demo did not create:
// they may be the user's, or left over from a demo that was killed.
func (s *scenario) checkNoneExist(ctx context.Context, c client.Client) error {
	var found []string
	for _, obj := range s.objects() {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		switch {
		case err == nil && !obj.GetDeletionTimestamp().IsZero():
			found = append(found, describe(obj)+" (still being deleted)")
		case err == nil:
			found = append(found, describe(obj))
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("checking for %s: %w", describe(obj), err)
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("the hub already has %s; the demo does not touch objects it did not create. "+
			"Wait for them to go or delete them (a demo killed earlier may have left them), and retry",
			strings.Join(found, ", "))
	}
	return nil
}

// delete removes the scenario's objects from a hub the demo did not start.
// It runs during cleanup, when the demo's context may be cancelled already.
func (s *scenario) delete(c client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, obj := range s.objects() {
		if err := c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %s: %w", describe(obj), err))
		}
	}
	return errors.Join(errs...)
}

func describe(obj client.Object) string {
	kind := strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.")
	kind = strings.TrimPrefix(kind, "*v1beta2.")
	if obj.GetNamespace() != "" {
		return fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
	}
	return fmt.Sprintf("%s %s", kind, obj.GetName())
}
