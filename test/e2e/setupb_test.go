//go:build linux

package e2e

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
)

// TestSetupBOCMsMirrorWithTheBundlesEntriesAndCopies types the chart
// README's setup B on a hub whose ClusterManager enables OCM's mirror
// (install.md's patch): the install, then install.md's uninstall for that
// setup. In between, OCM's mirror publishes the profiles (also in a
// namespace bound after the install) and the bundle's access provider and
// syncer add the entry and the token copy to each, through which a
// consumer reaches every cluster; the doctor agrees. After the uninstall
// OCM's profiles stay, same objects, without the bundle's entry, and no
// copy is left. The suite's release steps aside first and comes back last.
func TestSetupBOCMsMirrorWithTheBundlesEntriesAndCopies(t *testing.T) {
	ctx, g := begin(t)
	const boundLater = "e2e-setup-b"
	shell := docsShellFor(t)
	g.Expect(env.UninstallChart(ctx, releaseName, releaseNamespace)).To(Succeed())
	// Cleanups run last first: OCM's mirror goes off before the suite's
	// release comes back, or its mirror would yield.
	t.Cleanup(func() { restoreSuiteRelease(t) })
	t.Cleanup(func() { setOCMMirror(context.Background(), t, false) })
	t.Cleanup(func() {
		_ = client.IgnoreNotFound(hub.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: boundLater}}))
	})
	setOCMMirror(ctx, t, true)

	shell.run(t, docsrun.SetupBInstall, installFromCloneWithMirror())
	g.Expect(env.WaitDeploymentAvailable(ctx, docsNamespace, docsRelease)).To(Succeed())
	g.Expect(bindSet(ctx, boundLater, defaultSet)).To(Succeed())
	namespaces := []string{consumerNS, boundLater}
	before := map[types.NamespacedName]types.UID{}
	for _, ns := range namespaces {
		g.Eventually(func(g Gomega) { publishedByTheDocsRelease(ctx, g, ns) }).Should(Succeed(),
			"setup B: the bundle's entry and copy on every profile of %s", ns)
		for _, cluster := range fleetClusters {
			p := &cpv1alpha1.ClusterProfile{}
			g.Expect(hub.Get(ctx, key(ns, cluster), p)).To(Succeed())
			before[key(ns, cluster)] = p.UID
			if ns == boundLater {
				g.Expect(managerNames(p.ManagedFields)).NotTo(ContainElement(clusterprofile.MirrorFieldManager),
					"OCM's mirror, not the bundle's, created %s in %s", cluster, ns)
			}
		}
	}
	reachesEveryCluster(ctx, g, "setup B", namespaces...)
	report := runDoctor(t)
	g.Expect(report.Mirror).To(HavePrefix("OCM's built-in mirror publishes the profiles"))
	for _, row := range report.Rows {
		g.Expect(row.OK()).To(BeTrue(), "doctor row %s: %+v", row.Cluster, row.Checks)
	}

	shell.run(t, docsrun.SetupBUninstall, nil)
	g.Expect(allCopies(ctx, g)).To(BeEmpty(), "setup B's uninstall removes the copies")
	g.Eventually(func() error {
		return hub.Get(ctx, key(docsNamespace, docsRelease), &appsv1.Deployment{})
	}).Should(Satisfy(apierrors.IsNotFound), "helm uninstall removes the manager")
	for name, uid := range before {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, name, p)).To(Succeed(), "OCM's profile %s stays", name)
		g.Expect(p.UID).To(Equal(uid), "OCM's profile %s is the same object", name)
		g.Expect(p.Status.AccessProviders).NotTo(ContainElement(HaveField("Name", consumer.ProxyProvider)),
			"the bundle's entry is withdrawn from %s", name)
	}
}

// setOCMMirror turns OCM's mirror on or off in the ClusterManager by typing
// install.md's commands (docsrun.OCMMirrorGate, "Enable" for "Disable" to
// turn it on), then waits for OCM's operator to roll the change out.
func setOCMMirror(ctx context.Context, t *testing.T, on bool) {
	t.Helper()
	mode := map[bool]string{true: `"mode":"Enable"`, false: `"mode":"Disable"`}
	printed := docsShellFor(t).run(t, docsrun.OCMMirrorGate, strings.NewReplacer(mode[false], mode[on]))
	requireOnlyTheMirrorGate(t, printed[0])
	if err := env.SetHubFeatureGates(ctx, map[string]bool{coexistence.BuiltInGate: on}); err != nil {
		t.Fatalf("turning OCM's mirror on=%v: %v", on, err)
	}
}
