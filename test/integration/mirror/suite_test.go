package mirror_test

import (
	"context"
	"os"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

// profileNamespaces returns, sorted, the namespaces holding a profile named name.
func profileNamespaces(g Gomega, ctx context.Context, name string) []string {
	profiles, err := framework.Profiles(ctx, env.Client, name)
	g.Expect(err).NotTo(HaveOccurred())
	namespaces := make([]string, 0, len(profiles))
	for ns := range profiles {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	return namespaces
}

// expectProfilesIn waits until exactly these namespaces hold the cluster's profile.
func expectProfilesIn(t *testing.T, ctx context.Context, cluster string, namespaces ...string) {
	t.Helper()
	if namespaces == nil {
		namespaces = []string{}
	}
	sort.Strings(namespaces)
	NewWithT(t).Eventually(func(g Gomega) []string {
		return profileNamespaces(g, ctx, cluster)
	}, framework.Timeout, framework.Interval).Should(Equal(namespaces), "namespaces with a profile of %s", cluster)
}

func getProfile(g Gomega, ctx context.Context, namespace, name string) *cpv1alpha1.ClusterProfile {
	p := &cpv1alpha1.ClusterProfile{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, p)).To(Succeed())
	return p
}

// expectProfile waits until the profile reads as want.
func expectProfile(t *testing.T, ctx context.Context, namespace, name string, want utiltesting.ProfileView) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := utiltesting.ViewOf(getProfile(g, ctx, namespace, name))
		g.Expect(cmp.Diff(want, got)).To(BeEmpty(), "profile %s/%s (-want +got)", namespace, name)
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// deleteNamespace starts deleting a namespace; without a namespace controller
// it stays Terminating.
func deleteNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Delete(ctx, ns); err != nil {
		t.Fatalf("deleting namespace %s: %v", name, err)
	}
}

// eventsAbout lists the events.k8s.io Events about one object with a reason.
func eventsAbout(g Gomega, ctx context.Context, kind, name, reason string) []eventsv1.Event {
	events, err := framework.EventsAbout(ctx, env.Client, kind, name, reason)
	g.Expect(err).NotTo(HaveOccurred())
	return events
}
