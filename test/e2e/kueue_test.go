//go:build linux

package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kueue"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/ocm"
)

// TestTheMultiKueueRecipeAdmitsOnAWorkerWithEachKueue follows the docs'
// MultiKueue recipe (docs/examples/multikueue) on real Kueue, on the hub and
// on both clusters as workers: the harness installed Kueue v0.16.1 with the
// recipe's configuration and patched its Deployment with the recipe's
// initContainer, which copies cp-creds from the bundle's image. Here the
// recipe's worker step goes onto each cluster and its MultiKueue objects
// onto the hub: each MultiKueueCluster connects through its profile in
// kueue-system (the entry's server and CA, the token cp-creds reads from
// the synced copy) and stays Active, the admission check is Active, and the
// recipe's Job is admitted on a worker. Then Kueue is upgraded to v0.19.2
// everywhere, the configuration step typed again with the recipe's file for
// that release (accessProviders), and the Job admitted on a worker again.
// It runs after kueue_reconnect_test.go's test (go test runs a package's
// files in name order), which needs Kueue's first release.
func TestTheMultiKueueRecipeAdmitsOnAWorkerWithEachKueue(t *testing.T) {
	ctx, g := begin(t)
	manager := &appsv1.Deployment{}
	g.Expect(hub.Get(ctx, key(kueue.Namespace, kueue.Deployment), manager)).To(Succeed())
	g.Expect(manager.Spec.Template.Spec.InitContainers).To(ContainElement(And(
		HaveField("Image", env.Registry.BundleReference()),
		HaveField("Command", []string{"cp", "/cp-creds", "/plugins/cp-creds"}))), "Kueue copies cp-creds from the bundle's image")

	shell := docsShellFor(t)
	// Step 1, after install.md's scoping of cluster1's token (moving from
	// OCM's guide), which the recipe then does for both: the suite's
	// multikueue tokens are copied into kueue-system only.
	putTheSuiteTokensBackAtCleanup(ctx, t)
	shell.run(t, docsrun.ScopeManagedServiceAccount, nil)
	deleteAtCleanup(t, hub, recipeObjects(t, "clusterset.yaml"))
	shell.run(t, docsrun.MultiKueuePublish, nil)
	want := []string{}
	for _, cluster := range fleetClusters {
		want = append(want, consumerNS+"/"+cpcreds.SecretName(cluster, msaName))
	}
	g.Eventually(func(g Gomega) []string { return copiesOf(ctx, g, msaName) }).Should(ConsistOf(want), "the recipe's tokens are copied into %s only", consumerNS)

	workers := map[string]client.Client{}
	for _, c := range env.Clusters {
		managed, err := client.New(c.Config, client.Options{Scheme: hub.Scheme()})
		g.Expect(err).NotTo(HaveOccurred())
		workers[c.Name] = managed
		deleteAtCleanup(t, managed, append(recipeObjects(t, "worker-queues.yaml"), recipeObjects(t, "worker-rbac.yaml")...))
		shell.run(t, docsrun.MultiKueueWorker, strings.NewReplacer("<worker>", c.Name))
	}
	// The one edit: the image of the patch, as the recipe says for a mirror.
	patch := mirroredRecipePatch(t)
	shell.run(t, docsrun.MultiKueueConfigure, strings.NewReplacer(
		"docs/examples/multikueue/"+kueue.RecipePatchFile, patch))
	deleteAtCleanup(t, hub, recipeObjects(t, "multikueue.yaml"))
	shell.run(t, docsrun.MultiKueueObjects, nil)
	multiKueueActive(ctx, g)
	t.Run("v0.16.1", func(t *testing.T) { jobAdmittedOnAWorker(ctx, t, shell, workers) })

	version, err := env.UpgradeKueue(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	// The recipe's edit for Kueue 0.19 and later: its configuration file.
	shell.run(t, docsrun.MultiKueueConfigure, strings.NewReplacer(
		"docs/examples/multikueue/"+kueue.RecipePatchFile, patch,
		"docs/examples/multikueue/"+kueue.RecipeConfigFile, "docs/examples/multikueue/"+kueue.RecipeConfigV019File))
	multiKueueActive(ctx, g)
	t.Run(version, func(t *testing.T) { jobAdmittedOnAWorker(ctx, t, shell, workers) })
}

// putTheSuiteTokensBackAtCleanup puts the suite's ManagedServiceAccounts
// back as they are now (unscoped) when the test ends, and waits until their
// copies are back in every namespace that has one now, for the tests after
// it.
func putTheSuiteTokensBackAtCleanup(ctx context.Context, t *testing.T) {
	g := NewWithT(t)
	before := copiesOf(ctx, g, msaName)
	saved := map[string]*authv1beta1.ManagedServiceAccount{}
	for _, cluster := range fleetClusters {
		msa := &authv1beta1.ManagedServiceAccount{}
		g.Expect(hub.Get(ctx, key(cluster, msaName), msa)).To(Succeed())
		saved[cluster] = msa
	}
	t.Cleanup(func() {
		for _, old := range saved {
			g.Eventually(func() error {
				msa := &authv1beta1.ManagedServiceAccount{}
				if err := hub.Get(ctx, client.ObjectKeyFromObject(old), msa); err != nil {
					return err
				}
				msa.Labels, msa.Annotations, msa.Spec = old.Labels, old.Annotations, old.Spec
				return hub.Update(ctx, msa)
			}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		}
		g.Eventually(func(g Gomega) []string { return copiesOf(ctx, g, msaName) }).WithTimeout(timeout).WithPolling(interval).
			Should(ConsistOf(before), "the suite's tokens copied again where they were")
	})
}

// copiesOf lists the token copies of the fleet's ManagedServiceAccounts
// named msa on the hub.
func copiesOf(ctx context.Context, g Gomega, msa string) []string {
	var values []string
	for _, cluster := range fleetClusters {
		values = append(values, cpcreds.SyncedFromValue(cluster, msa))
	}
	from, err := labels.NewRequirement(credsync.LabelSyncedFrom, selection.In, values)
	g.Expect(err).NotTo(HaveOccurred())
	return copies(ctx, g, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*from)})
}

// multiKueueActive waits until every MultiKueueCluster is Active and stays
// so, and the admission check is Active.
func multiKueueActive(ctx context.Context, g Gomega) {
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
		active, err := kueue.StatusCondition(check, "Active")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(active).NotTo(BeNil(), "the admission check has no Active condition")
		g.Expect(active.Status).To(Equal(metav1.ConditionTrue), "the admission check")
	}).Should(Succeed())
}

// jobAdmittedOnAWorker types the recipe's Job step and repeats its listing
// until it shows the hub's Workload admitted on a worker, checks that the
// worker admitted its copy, and at the end deletes the Job everywhere.
func jobAdmittedOnAWorker(ctx context.Context, t *testing.T, shell *docsShell, workers map[string]client.Client) {
	g := withSuiteWaits(t)
	t.Cleanup(func() { removeRecipeJob(ctx, t, workers) })
	shell.run(t, docsrun.MultiKueueJob, nil)
	block, err := docsrun.Find(ocmlocal.RepoRoot(), docsrun.MultiKueueJob)
	g.Expect(err).NotTo(HaveOccurred())
	commands := block.Commands()
	listing := commands[len(commands)-1]
	var worker string
	g.Eventually(func(g Gomega) {
		out, err := shell.exec(listing)
		g.Expect(err).NotTo(HaveOccurred())
		columns := strings.Fields(out)
		g.Expect(columns).To(HaveLen(6), "a header and one Workload:\n%s", out)
		g.Expect(columns[4]).To(Equal("True"), "the hub's Workload admitted:\n%s", out)
		g.Expect(workers).To(HaveKey(columns[5]), "the hub's Workload names its worker:\n%s", out)
		worker = columns[5]
	}).Should(Succeed())
	g.Expect(recipeWorkloads(ctx, workers[worker])).To(ContainElement(WithTransform(admitted, BeTrue())),
		"%s admitted its copy of the Workload", worker)
}

// removeRecipeJob deletes the recipe's Job and its Workloads on the hub
// and on every worker, and waits until they are gone, so that the Job can
// be created again.
func removeRecipeJob(ctx context.Context, t *testing.T, workers map[string]client.Client) {
	g := NewWithT(t)
	job := recipeObjects(t, "job.yaml")[0]
	clusters := map[string]client.Client{"hub": hub}
	maps.Copy(clusters, workers)
	for name, c := range clusters {
		g.Expect(client.IgnoreNotFound(c.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)))).To(Succeed())
		workload := &unstructured.Unstructured{}
		workload.SetGroupVersionKind(kueueGVK("Workload"))
		g.Expect(c.DeleteAllOf(ctx, workload, client.InNamespace(job.GetNamespace()))).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(job), job.DeepCopy())).To(Satisfy(apierrors.IsNotFound), "the Job on %s", name)
			g.Expect(recipeWorkloads(ctx, c)).To(BeEmpty(), "the Workloads on %s", name)
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	}
}

// recipeWorkloads are the Workloads in the recipe Job's namespace.
func recipeWorkloads(ctx context.Context, c client.Client) ([]unstructured.Unstructured, error) {
	workloads := &unstructured.UnstructuredList{}
	workloads.SetGroupVersionKind(kueueGVK("WorkloadList"))
	err := c.List(ctx, workloads, client.InNamespace("default"))
	return workloads.Items, err
}

// admitted tells whether a Workload's Admitted condition is True.
func admitted(workload unstructured.Unstructured) bool {
	return kueue.ConditionTrue(&workload, "Admitted")
}

// mirroredRecipePatch writes the recipe's patch with the bundle's image in
// the local registry (the harness's kueue.MirroredRecipePatch, which it
// applies too) and returns its path.
func mirroredRecipePatch(t *testing.T) string {
	t.Helper()
	mirrored, err := kueue.MirroredRecipePatch(env.Registry.BundleRepository)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), kueue.RecipePatchFile)
	if err := os.WriteFile(path, mirrored, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recipeObjects are the objects of a file of the docs' MultiKueue recipe.
func recipeObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	objects, err := ocm.ObjectsOfFile(kueue.RecipeFile(file))
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// allowMultiKueueWorker creates on cluster the recipe's worker RBAC
// (worker-rbac.yaml, which step 2 applies): the one copy of what MultiKueue
// may do on a worker. It can be called again.
func allowMultiKueueWorker(ctx context.Context, t *testing.T, cluster string) error {
	t.Helper()
	managed, err := client.New(env.Cluster(cluster).Config, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	for _, obj := range recipeObjects(t, "worker-rbac.yaml") {
		if err := client.IgnoreAlreadyExists(managed.Create(ctx, obj)); err != nil {
			return err
		}
	}
	return nil
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
		c, err := multiKueueClusterCondition(ctx, hub, cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c).NotTo(BeNil(), "Kueue wrote no Active condition")
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Active: %s: %s", c.Reason, c.Message)
	}
}
