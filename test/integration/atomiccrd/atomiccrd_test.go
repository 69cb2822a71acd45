// Package atomiccrd_test runs the mirror against a ClusterProfile CRD whose
// status lists are atomic (no list-map markers), as in the copy OCM's
// operator installs. There a Server-Side Apply of a list would replace it
// whole, so the mirror must merge and keep every other writer's entries.
package atomiccrd_test

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{AtomicClusterProfileCRD: true}, &env))
}

func TestKeepsOtherWritersEntriesOnAtomicStatusLists(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	g := NewWithT(t)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(ctx, types.NamespacedName{Name: clusterprofile.CRDName}, crd)).To(Succeed())
	g.Expect(profilewrite.StatusListsAreMaps(crd)).To(BeFalse(), "this suite needs the old, atomic-list CRD")
	counter := framework.NewRequestCounter("clusterprofiles", "atomic-ns")
	stop := framework.StartManager(t, env, framework.ManagerOptions{Counter: counter})
	framework.CreateNamespace(ctx, t, c, "atomic-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("atomic-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("atomic-c1").ClusterSet("atomic-set").
		Version("v1.30.0").Claim("region", "eu").Claim("zone", "a").Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("atomic-ns", "atomic-set").Bound(true).Obj())

	key := types.NamespacedName{Namespace: "atomic-ns", Name: "atomic-c1"}
	profile := &cpv1alpha1.ClusterProfile{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, key, profile)).To(Succeed())
		g.Expect(propertiesOf(profile)).To(Equal(map[string]string{"region": "eu", "zone": "a",
			"cluster.clusterset.k8s.io": "atomic-c1", "clusterset.k8s.io": "atomic-set"}))
		g.Expect(profile.Status.Conditions).To(HaveLen(2))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(counter.Writes()).To(Equal(2), "one create and one status write")
	g.Expect(profile.Annotations).To(HaveKeyWithValue(mirror.AnnotationMirroredProperties, `["cluster.clusterset.k8s.io","clusterset.k8s.io","region","zone"]`))

	// Another writer adds its own entries the way older writers do: a merge
	// patch of whole lists, under optimistic lock.
	writeAsOldWriter(ctx, t, key, func(p *cpv1alpha1.ClusterProfile) {
		p.Status.Conditions = append(p.Status.Conditions, metav1.Condition{
			Type: "ThirdPartyReady", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: utiltesting.ConditionTime})
		p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: "cost-center", Value: "42"})
		p.Status.AccessProviders = []cpv1alpha1.AccessProvider{{Name: "example", Cluster: clientcmdv1.Cluster{Server: "https://example.invalid"}}}
	})

	// The mirror replaces a property, drops one, flips a condition.
	framework.UpdateClusterStatus(ctx, t, c, "atomic-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "us"}}
		w := utiltesting.MakeManagedCluster("x")
		w.Status = mc.Status
		mc.Status = w.Available(metav1.ConditionFalse).Obj().Status
	})
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, key, profile)).To(Succeed())
		g.Expect(propertiesOf(profile)).To(Equal(map[string]string{"region": "us", "cost-center": "42",
			"cluster.clusterset.k8s.io": "atomic-c1", "clusterset.k8s.io": "atomic-set"}))
		g.Expect(conditionStatuses(profile)).To(Equal(map[string]metav1.ConditionStatus{
			"ControlPlaneHealthy": metav1.ConditionFalse, "Joined": metav1.ConditionTrue, "ThirdPartyReady": metav1.ConditionTrue}))
		g.Expect(profile.Status.AccessProviders).To(HaveLen(1))
		// The record of the mirror's property names is trimmed after the
		// status write: settled only once it lists exactly the names left.
		g.Expect(profile.Annotations).To(HaveKeyWithValue(mirror.AnnotationMirroredProperties, `["cluster.clusterset.k8s.io","clusterset.k8s.io","region"]`))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Steady state and restarts still cost nothing.
	writes := counter.Writes()
	g.Consistently(counter.Writes, 2*time.Second, 100*time.Millisecond).Should(Equal(writes))
	stop()
	restarted := framework.NewRequestCounter("clusterprofiles", "atomic-ns")
	framework.StartManager(t, env, framework.ManagerOptions{Counter: restarted})
	g.Consistently(restarted.Writes, 2*time.Second, 100*time.Millisecond).Should(BeZero())
}

// writeAsOldWriter changes a profile's status the way writers before
// Server-Side Apply do: a merge patch of whole lists under optimistic lock,
// retried on conflict with the other writers.
func writeAsOldWriter(ctx context.Context, t *testing.T, key types.NamespacedName, mutate func(*cpv1alpha1.ClusterProfile)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		current := &cpv1alpha1.ClusterProfile{}
		if err := env.Client.Get(ctx, key, current); err != nil {
			return err
		}
		patched := current.DeepCopy()
		mutate(patched)
		return env.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		t.Fatalf("writing %s as an old writer: %v", key, err)
	}
}

func propertiesOf(p *cpv1alpha1.ClusterProfile) map[string]string {
	out := map[string]string{}
	for _, prop := range p.Status.Properties {
		out[prop.Name] = prop.Value
	}
	return out
}

func conditionStatuses(p *cpv1alpha1.ClusterProfile) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	for _, c := range p.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}
