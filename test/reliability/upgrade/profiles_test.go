package upgrade_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var clusterProfiles = admissionregistrationv1.Rule{APIGroups: []string{cpv1alpha1.GroupVersion.Group},
	APIVersions: []string{cpv1alpha1.GroupVersion.Version}, Resources: []string{"clusterprofiles"}}

// profilesOf are the ClusterProfiles of namespace, by name.
func profilesOf(ctx context.Context, g Gomega, c client.Client, namespace string) map[string]cpv1alpha1.ClusterProfile {
	var list cpv1alpha1.ClusterProfileList
	g.Expect(c.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	out := map[string]cpv1alpha1.ClusterProfile{}
	for _, p := range list.Items {
		out[p.Name] = p
	}
	return out
}

// TestTheProfilesCleanupOutlastsAnAPIServerThatRefuses: the mirror published
// three profiles; its gate is turned off with cleanup asked for, and the API
// server refuses the delete of the middle one for a while. The cleanup
// retries with backoff until the mirror's profiles are all gone; another
// manager's profile in the namespace is unchanged.
func TestTheProfilesCleanupOutlastsAnAPIServerThatRefuses(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	const ns = "upg-profiles"
	framework.CreateNamespace(ctx, t, c, ns)
	NewWithT(t).Expect(c.Create(ctx, utiltesting.MakeClusterProfile(ns, "foreign", "other-manager").Obj())).To(Succeed())
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("upg-set").Obj())
	for _, name := range []string{"upg-c1", "upg-c2", "upg-c3"} {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(name).ClusterSet("upg-set").Obj())
	}
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, "upg-set").Bound(true).Obj())
	stop := framework.StartManager(t, env, framework.ManagerOptions{})
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(profilesOf(ctx, g, c, ns)).To(HaveLen(4))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	stop()

	lift := refuseDeletes(ctx, t, c, clusterProfiles, ns, "upg-c2")
	kept := profilesOf(ctx, NewWithT(t), c, ns)
	for _, name := range []string{"upg-c1", "upg-c2", "upg-c3"} {
		delete(kept, name)
	}
	counter := framework.NewRequestCounter("clusterprofiles", ns)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": false},
		CleanupDisabled: true, Counter: counter})
	refused := "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/" + ns + "/clusterprofiles/upg-c2"
	NewWithT(t).Eventually(func() int { return deletesSent(counter, refused) }, time.Minute, framework.Interval).
		Should(BeNumerically(">=", 2), "the refused delete is retried")
	lift()

	NewWithT(t).Eventually(func(g Gomega) {
		got := profilesOf(ctx, g, c, ns)
		g.Expect(cmp.Diff(kept, got)).To(BeEmpty(), "ClusterProfiles of %s (-want +got)", ns)
	}, time.Minute, framework.Interval).Should(Succeed())
	t.Logf("deletes of the refused profile: %d", deletesSent(counter, refused))
}
