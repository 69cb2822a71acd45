package reliability_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// A manager killed between a new profile's create and its status write
// leaves a profile with the mirror's metadata and no status. The next
// manager completes it: one profile, whole status, nothing orphaned.
func TestAProfileCreatedButNotYetWrittenIsCompleted(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("between-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("between-c1").ClusterSet("between-set").
		Version("v1.31.0").Claim("region", "eu").Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateNamespace(ctx, t, c, "between-ns")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("between-ns", "between-set").Bound(true).Obj())
	labels := map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
		"open-cluster-management.io/cluster-name": "between-c1", "multicluster.x-k8s.io/clusterset": "between-set"}
	createAsTheMirror(ctx, t, c, "between-ns", "between-c1", labels, nil)

	framework.StartManager(t, env, framework.ManagerOptions{})
	key := types.NamespacedName{Namespace: "between-ns", Name: "between-c1"}
	expectStatus(t, ctx, c, key, statusView{Properties: append(standardProperties("between-c1", "between-set"), "region=eu"),
		Conditions: []string{"ControlPlaneHealthy", "Joined"}})
	expectProfile(t, ctx, "between-ns", "between-c1", profileView{Labels: labels, DisplayName: "between-c1",
		Manager: "open-cluster-management", Properties: 3})
}

// createAsTheMirror writes a profile's metadata and spec as the mirror's
// metadata apply does (creating it when missing), under its field manager.
func createAsTheMirror(ctx context.Context, t *testing.T, c client.Client, namespace, name string, labels, annotations map[string]string) {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: cpv1alpha1.GroupVersion.String(), Kind: "ClusterProfile"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, Annotations: annotations},
		Spec: cpv1alpha1.ClusterProfileSpec{DisplayName: name,
			ClusterManager: cpv1alpha1.ClusterManager{Name: "open-cluster-management"}},
	}
	//lint:ignore SA1019 an apply patch of a typed object is how the mirror's first write looks on the wire
	if err := c.Patch(ctx, p, client.Apply, client.FieldOwner(clusterprofile.MirrorFieldManager), client.ForceOwnership); err != nil {
		t.Fatalf("creating %s/%s as the mirror's first write: %v", namespace, name, err)
	}
}

// On an atomic-list CRD the mirror records a new property's name as its
// own (annotation), writes the status, then records the exact names. A
// manager killed between the status write and the exact record leaves the
// name recorded with the old ones; when the claim then goes, the next
// manager removes the property and trims the record, keeping other
// writers' properties. (Recorded after the status instead, as before, a
// kill there left a property no writer owned, never removed.)
func TestAPropertyWrittenButNotYetRecordedIsNotOrphaned(t *testing.T) {
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
	stop := framework.StartManager(t, atomic, framework.ManagerOptions{})
	key := types.NamespacedName{Namespace: "record-ns", Name: "record-c1"}
	expectStatus(t, ctx, c, key, statusView{Properties: append(standardProperties("record-c1", "record-set"), "region=eu")})
	stop()

	// What the killed manager left: the zone claim's name recorded with
	// region's, its property written by the mirror's merge patch; and
	// another writer's property.
	labels := map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
		"open-cluster-management.io/cluster-name": "record-c1", "multicluster.x-k8s.io/clusterset": "record-set"}
	createAsTheMirror(ctx, t, c, "record-ns", "record-c1", labels, map[string]string{mirror.AnnotationMirroredProperties: `["region","zone"]`})
	retryStatusAs(ctx, t, c, key, clusterprofile.MirrorFieldManager, func(p *cpv1alpha1.ClusterProfile) {
		p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: "zone", Value: "a"})
	})
	retryStatus(ctx, t, c, key, func(p *cpv1alpha1.ClusterProfile) {
		p.Status.Properties = append(p.Status.Properties, cpv1alpha1.Property{Name: "cost-center", Value: "42"})
	})
	// The zone claim is gone by the time the next manager starts.
	framework.StartManager(t, atomic, framework.ManagerOptions{})
	expectStatus(t, ctx, c, key, statusView{Properties: append(standardProperties("record-c1", "record-set"), "cost-center=42", "region=eu")})
	NewWithT(t).Eventually(func(g Gomega) map[string]string {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(c.Get(ctx, key, p)).To(Succeed())
		return p.Annotations
	}, framework.Timeout, framework.Interval).Should(Equal(map[string]string{mirror.AnnotationMirroredProperties: `["cluster.clusterset.k8s.io","clusterset.k8s.io","region"]`}))
}
