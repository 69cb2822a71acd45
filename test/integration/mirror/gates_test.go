package mirror_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	operatorv1 "open-cluster-management.io/api/operator/v1"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestGateOffPublishesNothing: with the gate off a publishable world stays
// unpublished; the same manager with the gate on then publishes it (the
// positive control: the world was publishable all along).
func TestGateOffPublishesNothing(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": false}})
	framework.CreateNamespace(ctx, t, c, "gateoff-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("gateoff-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("gateoff-c1").ClusterSet("gateoff-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("gateoff-ns", "gateoff-set").Bound(true).Obj())
	NewWithT(t).Consistently(func(g Gomega) []string {
		return profileNamespaces(g, ctx, "gateoff-c1")
	}, 2*time.Second, 100*time.Millisecond).Should(BeEmpty())
	stop()

	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true}})
	expectProfilesIn(t, ctx, "gateoff-c1", "gateoff-ns")
	p := getProfile(NewWithT(t), ctx, "gateoff-ns", "gateoff-c1")
	want := map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
		"open-cluster-management.io/cluster-name": "gateoff-c1", "multicluster.x-k8s.io/clusterset": "gateoff-set"}
	if diff := cmp.Diff(want, p.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestCleanupWhenTheGateIsTurnedOff(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	stop := framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "cleanup-ns")
	foreign := utiltesting.MakeClusterProfile("cleanup-ns", "cleanup-foreign", "other-manager").Obj()
	if err := c.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("cleanup-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("cleanup-c1").ClusterSet("cleanup-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("cleanup-ns", "cleanup-set").Bound(true).Obj())
	expectProfilesIn(t, ctx, "cleanup-c1", "cleanup-ns")
	stop()
	// Same manager name, but written by someone else (say OCM's own mirror,
	// while ours was off): the cleanup leaves it alone.
	sameNameOtherWriter := utiltesting.MakeClusterProfile("cleanup-ns", "cleanup-builtin", "open-cluster-management").Obj()
	if err := c.Create(ctx, sameNameOtherWriter); err != nil {
		t.Fatal(err)
	}

	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": false}, CleanupDisabled: true})
	expectProfilesIn(t, ctx, "cleanup-c1")
	NewWithT(t).Consistently(func(g Gomega) {
		getProfile(g, ctx, "cleanup-ns", "cleanup-foreign")
		getProfile(g, ctx, "cleanup-ns", "cleanup-builtin")
	}, time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestStaysPassiveWhileOCMsBuiltInMirrorIsEnabled(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	clusterManager := &operatorv1.ClusterManager{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"},
		Spec: operatorv1.ClusterManagerSpec{RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{
			FeatureGates: []operatorv1.FeatureGate{{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable}},
		}},
	}
	if err := c.Create(ctx, clusterManager); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, clusterManager) })
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "passive-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("passive-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("passive-c1").ClusterSet("passive-set").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("passive-ns", "passive-set").Bound(true).Obj())

	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ClusterManager", "cluster-manager", "BuiltInClusterProfileMirrorEnabled")).To(HaveLen(1))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	NewWithT(t).Consistently(func(g Gomega) []string {
		return profileNamespaces(g, ctx, "passive-c1")
	}, 2*time.Second, 100*time.Millisecond).Should(BeEmpty())

	framework.Update(ctx, t, c, clusterManager, func(cm *operatorv1.ClusterManager) {
		cm.Spec.RegistrationConfiguration.FeatureGates[0].Mode = operatorv1.FeatureGateModeTypeDisable
	})
	expectProfilesIn(t, ctx, "passive-c1", "passive-ns")
}
