package credsync_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestARestartQueuesOneKeyPerCluster: a restarted manager's syncer and
// access provider queue one key per cluster, not one per profile and watch
// (every profile, binding, token and copy hands them an event at a start),
// and the resync writes nothing.
func TestARestartQueuesOneKeyPerCluster(t *testing.T) {
	ctx := framework.ContextFor(t)
	gates := map[string]bool{"ClusterProfileCredSyncer": true, "ClusterProfileDirectAccess": true}
	for k, v := range syncGates {
		gates[k] = v
	}
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})
	clusters := []string{"rs-c1", "rs-c2", "rs-c3"}
	fleet(ctx, t, "rs-set", clusters, "rs-a", "rs-b", "rs-c", "rs-d")
	for _, cluster := range clusters {
		framework.UpdateCluster(ctx, t, env.Client, cluster, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api." + cluster + ":6443"}}
		})
		createMSA(ctx, t, cluster, "multikueue", "token-"+cluster, expiry, true)
	}
	for _, cluster := range clusters {
		expectCopiesIn(t, ctx, cluster+"-multikueue", "rs-a", "rs-b", "rs-c", "rs-d")
	}
	NewWithT(t).Eventually(func(g Gomega) {
		for _, cluster := range clusters {
			for _, ns := range []string{"rs-a", "rs-b", "rs-c", "rs-d"} {
				p := &cpv1alpha1.ClusterProfile{}
				g.Expect(env.Client.Get(ctx, keyOf(ns, cluster), p)).To(Succeed())
				g.Expect(p.Status.AccessProviders).To(ContainElement(HaveField("Name", accessprovider.DefaultDirectEntryName)))
			}
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
	stop()

	// The hub holds other tests' profiles too: a restart's keys are the
	// names of every profile and every copy's cluster.
	names, profiles := hubKeys(ctx, t)
	if profiles <= names.Len() {
		t.Fatalf("the hub holds %d profiles under %d names: nothing to fold", profiles, names.Len())
	}
	controllers := []string{credsync.ControllerName, accessprovider.DirectFieldManager}
	before := framework.KeysQueued(t, controllers...)
	profilesBefore := profileVersions(ctx, t)
	secretWrites := framework.NewRequestCounter("secrets", "rs-")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates, Counter: secretWrites})

	want := map[string]float64{}
	for _, name := range controllers {
		want[name] = float64(names.Len())
	}
	framework.ExpectKeysQueued(t, before, want)
	if writes := secretWrites.Writes(); writes != 0 {
		t.Errorf("the restart wrote Secrets %d times: %v", writes, secretWrites.Requests())
	}
	NewWithT(t).Expect(profileVersions(ctx, t)).To(Equal(profilesBefore), "profiles written by the restart")
}

// hubKeys are the names of every ClusterProfile on the hub and every synced
// copy's cluster, and how many profiles there are.
func hubKeys(ctx context.Context, t *testing.T) (sets.Set[string], int) {
	t.Helper()
	profiles := &cpv1alpha1.ClusterProfileList{}
	copies := &corev1.SecretList{}
	if err := env.Client.List(ctx, profiles); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(ctx, copies, client.HasLabels{credsync.LabelSyncedFrom}); err != nil {
		t.Fatal(err)
	}
	names := sets.New[string]()
	for _, p := range profiles.Items {
		names.Insert(p.Name)
	}
	for _, s := range copies.Items {
		names.Insert(s.Annotations["authentication.open-cluster-management.io/synced-from-cluster"])
	}
	return names, len(profiles.Items)
}

// profileVersions is every profile's resourceVersion, by key.
func profileVersions(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	profiles := &cpv1alpha1.ClusterProfileList{}
	if err := env.Client.List(ctx, profiles); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range profiles.Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}
