package reliability_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// SIGKILL between a new profile's create and its status write, for real:
// the manager (all writers on) runs behind a proxy that kills it once the
// API server has answered the first create of a profile, before the answer
// reaches it. The profile is left with the mirror's metadata and without
// its status; a restarted manager completes it: the exact world, every
// profile whole, no entry or copy orphaned.
func TestKilledBetweenCreateAndStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fleet := createFleet(ctx, t, "between", 3)
	proxy := startKillingProxy(t, env, profileCreated)
	proxy.arm(startManagerProcess(t, "manager", bundleGates, "--kubeconfig="+proxy.kubeconfig))
	key := proxy.waitKilled(t, 60*time.Second)
	killed := time.Now()

	ns, name, _ := strings.Cut(key, "/")
	left := &cpv1alpha1.ClusterProfile{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, left); err != nil {
		t.Fatalf("reading %s, created just before the kill: %v", key, err)
	}
	if fieldmanager.WrittenBy(left, clusterprofile.MirrorFieldManager, "status") || left.Status.Version.Kubernetes != "" {
		t.Fatalf("the mirror's status write of %s went out before the kill; left: %s", key, describeProfile(left))
	}
	t.Logf("killed once the create of %s was answered; left without the mirror's status: %s", key, describeProfile(left))

	startManagerProcess(t, "manager-2", bundleGates)
	fleet.expectExactWorld(t, ctx)
	t.Logf("FIGURE SIGKILL between a profile's create and its status write: exact world %s after the kill (restart included)",
		time.Since(killed).Round(100*time.Millisecond))
}

// On an atomic-list CRD the mirror records the property names it owns in an
// annotation (managedFields cannot tell writers' entries apart there). Here
// the manager is killed for real once the API server has answered the
// status write that swaps the region claim's property for the zone claim's,
// before the manager writes anything after it; then the zone claim goes
// too, while no manager runs. The restarted manager must still know the
// zone property as its own and remove it, keep another writer's property,
// and leave a record of exactly its names: no property orphaned. (Had the
// mirror recorded a new name only after the status write, the kill would
// leave zone unrecorded, and nobody would ever remove it.)
func TestKilledBetweenStatusAndOwnershipRecord(t *testing.T) {
	atomic, err := framework.Start(framework.Options{AtomicClusterProfileCRD: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = atomic.Stop() })
	ctx := framework.ContextFor(t)
	c := atomic.Client
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("record-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("record-c1").ClusterSet("record-set").
		Claim("region", "eu").Obj())
	framework.CreateNamespace(ctx, t, c, "record-ns")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("record-ns", "record-set").Bound(true).Obj())
	const mirrorOnly = "--feature-gates=ClusterProfile=true"
	key := types.NamespacedName{Namespace: "record-ns", Name: "record-c1"}
	first := startManagerProcessOn(t, atomic, "manager", mirrorOnly)
	expectRecorded(t, ctx, atomic, key, []string{"region=eu"}, `"region"`)
	first.kill()

	retryStatus(ctx, t, c, key, func(p *cpv1alpha1.ClusterProfile) {
		p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: "cost-center", Value: "42"})
	})
	setClaims(ctx, t, atomic, "record-c1", clusterv1.ManagedClusterClaim{Name: "zone", Value: "a"})
	proxy := startKillingProxy(t, atomic, statusWritten(key.String()))
	proxy.arm(startManagerProcessOn(t, atomic, "manager-2", mirrorOnly, "--kubeconfig="+proxy.kubeconfig))
	proxy.waitKilled(t, 60*time.Second)
	killed := time.Now()
	left := &cpv1alpha1.ClusterProfile{}
	if err := c.Get(ctx, key, left); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed once the status write of %s was answered; left: properties %v, record %s", key,
		statusOf(left).Properties, left.Annotations[mirror.AnnotationMirroredProperties])
	wantLeft := append(standardProperties(key.Name, "record-set"), "cost-center=42", "zone=a")
	if diff := cmp.Diff(wantLeft, statusOf(left).Properties); diff != "" {
		t.Fatalf("the kill did not follow the status write that swaps region for zone (-want +got):\n%s", diff)
	}

	setClaims(ctx, t, atomic, "record-c1")
	startManagerProcessOn(t, atomic, "manager-3", mirrorOnly)
	expectRecorded(t, ctx, atomic, key, []string{"cost-center=42"}, "")
	t.Logf("FIGURE SIGKILL between a status write and the ownership record (atomic-list CRD): exact profile %s after the kill (claim change and restart included)",
		time.Since(killed).Round(100*time.Millisecond))
}

// expectRecorded waits until the profile holds exactly the well-known
// properties, extra, and the mirror's record of the well-known names and
// recorded (a JSON list tail, "" for none).
func expectRecorded(t *testing.T, ctx context.Context, e *framework.Env, key types.NamespacedName, extra []string, recorded string) {
	t.Helper()
	expectStatus(t, ctx, e.Client, key, statusView{Properties: append(standardProperties(key.Name, "record-set"), extra...)})
	NewWithT(t).Eventually(func(g Gomega) map[string]string {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(e.Client.Get(ctx, key, p)).To(Succeed())
		return p.Annotations
	}, framework.Timeout, framework.Interval).Should(Equal(recordOf(recorded)))
}

// recordOf is the profile's annotations when the mirror records the
// well-known property names and recorded (a JSON list tail).
func recordOf(recorded string) map[string]string {
	names := `"cluster.clusterset.k8s.io","clusterset.k8s.io"`
	if recorded != "" {
		names += "," + recorded
	}
	return map[string]string{mirror.AnnotationMirroredProperties: "[" + names + "]"}
}

// setClaims replaces the cluster's claims, as its klusterlet reports them.
func setClaims(ctx context.Context, t *testing.T, e *framework.Env, cluster string, claims ...clusterv1.ManagedClusterClaim) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	framework.UpdateStatus(ctx, t, e.Client, mc, func(m *clusterv1.ManagedCluster) { m.Status.ClusterClaims = claims })
}
