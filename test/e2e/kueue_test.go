//go:build linux

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// TestTheMultiKueueRecipeDispatchesThroughProfiles follows the docs'
// MultiKueue recipe (docs/examples/multikueue) on real Kueue v0.16.1: the
// harness installed Kueue with the recipe's configuration and patched its
// Deployment with the recipe's initContainer, which copies cp-creds from the
// bundle's image. Here the recipe's worker RBAC goes onto each cluster and
// its MultiKueue objects onto the hub: each MultiKueueCluster connects
// through its profile in kueue-system (the entry's server and CA, the token
// cp-creds reads from the synced copy) and stays Active, the admission check
// is Active, and the recipe's Job is dispatched: its Workload appears on
// every worker, written with the ManagedServiceAccount's token. (The
// workers run Kueue's CRDs, not its manager, so no worker admits it.)
func TestTheMultiKueueRecipeDispatchesThroughProfiles(t *testing.T) {
	requireEnv(t)
	ctx, g := context.Background(), NewWithT(t)
	g.SetDefaultEventuallyTimeout(timeout)
	g.SetDefaultEventuallyPollingInterval(interval)
	kueue := &appsv1.Deployment{}
	g.Expect(hub.Get(ctx, key(ocmlocal.KueueNamespace, ocmlocal.KueueDeployment), kueue)).To(Succeed())
	g.Expect(kueue.Spec.Template.Spec.InitContainers).To(ContainElement(And(
		HaveField("Image", env.Registry.BundleReference()),
		HaveField("Command", []string{"cp", "/cp-creds", "/plugins/cp-creds"}))), "Kueue copies cp-creds from the bundle's image")

	shell := docsShellFor(t)
	// The one edit: the image of the patch, as the recipe says for a mirror.
	shell.run(t, docsrun.MultiKueueConfigure, strings.NewReplacer(
		"docs/examples/multikueue/"+ocmlocal.KueueRecipePatchFile, mirroredRecipePatch(t)))
	workers := map[string]client.Client{}
	for _, c := range env.Clusters {
		managed, err := client.New(c.Config, client.Options{Scheme: hub.Scheme()})
		g.Expect(err).NotTo(HaveOccurred())
		workers[c.Name] = managed
		objects := recipeObjects(t, "worker-rbac.yaml")
		deleteAtCleanup(t, managed, objects)
		for _, obj := range objects {
			g.Expect(managed.Create(ctx, obj)).To(Succeed(), "worker-rbac.yaml: %s %s on %s", obj.GetKind(), obj.GetName(), c.Name)
		}
	}
	deleteAtCleanup(t, hub, recipeObjects(t, "multikueue.yaml"))
	shell.run(t, docsrun.MultiKueueObjects, nil)
	for _, cluster := range fleetClusters {
		g.Eventually(multiKueueClusterActive(ctx, cluster)).Should(Succeed())
	}
	g.Consistently(func(g Gomega) {
		for _, cluster := range fleetClusters {
			multiKueueClusterActive(ctx, cluster)(g)
		}
	}).WithTimeout(15 * time.Second).WithPolling(time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		check := &unstructured.Unstructured{}
		check.SetGroupVersionKind(kueueGVK("AdmissionCheck"))
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: "multikueue"}, check)).To(Succeed())
		active, err := ocmlocal.StatusCondition(check, "Active")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(active).NotTo(BeNil(), "the admission check has no Active condition")
		g.Expect(active.Status).To(Equal(metav1.ConditionTrue), "the admission check")
	}).Should(Succeed())

	deleteAtCleanup(t, hub, recipeObjects(t, "job.yaml"))
	shell.run(t, docsrun.MultiKueueJob, nil)
	for name, managed := range workers {
		g.Eventually(func() ([]unstructured.Unstructured, error) {
			workloads := &unstructured.UnstructuredList{}
			workloads.SetGroupVersionKind(kueueGVK("WorkloadList"))
			err := managed.List(ctx, workloads, client.InNamespace("default"))
			return workloads.Items, err
		}).ShouldNot(BeEmpty(), "MultiKueue dispatches the Job's Workload to %s", name)
	}
}

// mirroredRecipePatch writes the recipe's patch with the bundle's image in
// the local registry (ocmlocal's MirroredKueueRecipePatch, which the
// harness applies too) and returns its path.
func mirroredRecipePatch(t *testing.T) string {
	t.Helper()
	mirrored, err := env.MirroredKueueRecipePatch()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ocmlocal.KueueRecipePatchFile)
	if err := os.WriteFile(path, mirrored, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recipeObjects are the objects of a file of the docs' MultiKueue recipe.
func recipeObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	objects, err := ocmlocal.ObjectsOfFile(ocmlocal.KueueRecipeFile(file))
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// deleteAtCleanup deletes objects with c when the test ends.
func deleteAtCleanup(t *testing.T, c client.Client, objects []*unstructured.Unstructured) {
	t.Cleanup(func() {
		for _, obj := range objects {
			_ = client.IgnoreNotFound(c.Delete(context.Background(), obj, client.PropagationPolicy(metav1.DeletePropagationBackground)))
		}
	})
}

func kueueGVK(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: kind}
}

// multiKueueClusterActive checks that Kueue holds the MultiKueueCluster of
// cluster Active.
func multiKueueClusterActive(ctx context.Context, cluster string) func(Gomega) {
	return func(g Gomega) {
		c, err := env.MultiKueueClusterActive(ctx, cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c).NotTo(BeNil(), "Kueue wrote no Active condition")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Active: %s: %s", c.Reason, c.Message)
	}
}
