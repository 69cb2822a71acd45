package mirror_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

func TestStatusFollowsTheCluster(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "status-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("status-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("status-c1").ClusterSet("status-set").
		Version("v1.30.1").Claim("platform.open-cluster-management.io", "AWS").Claim("region", "us-east-1").
		Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("status-ns", "status-set").Bound(true).Obj())
	expectProfilesIn(t, ctx, "status-c1", "status-ns")

	framework.UpdateClusterStatus(ctx, t, c, "status-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.Version.Kubernetes = "v1.31.0"
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{
			{Name: "platform.open-cluster-management.io", Value: "GCP"}, // changed
			{Name: "zone", Value: "b"},                                  // added; region removed
		}
		cluster := utiltesting.MakeManagedCluster("x")
		cluster.Status = mc.Status
		mc.Status = cluster.Condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionFalse,
			"ManagedClusterLeaseUpdateStopped", "Registration agent stopped updating its lease.").Obj().Status
	})
	labels := map[string]string{
		"x-k8s.io/cluster-manager":                "open-cluster-management",
		"open-cluster-management.io/cluster-name": "status-c1",
		"multicluster.x-k8s.io/clusterset":        "status-set",
	}
	expectProfile(t, ctx, "status-ns", "status-c1", utiltesting.ProfileView{
		Labels: labels, DisplayName: "status-c1", Manager: "open-cluster-management", Version: "v1.31.0",
		Properties: map[string]string{"platform.open-cluster-management.io": "GCP", "zone": "b",
			"cluster.clusterset.k8s.io": "status-c1", "clusterset.k8s.io": "status-set"},
		Conditions: map[string]utiltesting.ConditionView{
			"ControlPlaneHealthy": {Status: metav1.ConditionFalse, Reason: "ManagedClusterLeaseUpdateStopped", Message: "Registration agent stopped updating its lease."},
			"Joined":              {Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "Managed cluster joined"},
		},
	})

	// Conditions and claims that vanish from the cluster vanish from the
	// profile; the standard properties stay.
	framework.UpdateClusterStatus(ctx, t, c, "status-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.Conditions = nil
		mc.Status.ClusterClaims = nil
		mc.Status.Version.Kubernetes = ""
	})
	expectProfile(t, ctx, "status-ns", "status-c1", utiltesting.ProfileView{
		Labels: labels, DisplayName: "status-c1", Manager: "open-cluster-management",
		Properties: map[string]string{"cluster.clusterset.k8s.io": "status-c1", "clusterset.k8s.io": "status-set"},
		Conditions: map[string]utiltesting.ConditionView{},
	})
}

func TestSkipsClaimsTheSchemaWouldRejectAndReportsThemOnce(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "claims-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("claims-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("claims-c1").ClusterSet("claims-set").
		Version("v1.30.1").Available(metav1.ConditionTrue).
		Claim("good", "yes").
		Claim("", "nameless").
		Claim("valueless", "").
		Claim("good", "second of a duplicate").
		Claim("also-good", "yes").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("claims-ns", "claims-set").Bound(true).Obj())

	NewWithT(t).Eventually(func(g Gomega) {
		v := utiltesting.ViewOf(getProfile(g, ctx, "claims-ns", "claims-c1"))
		g.Expect(v.Properties).To(Equal(map[string]string{"good": "yes", "also-good": "yes",
			"cluster.clusterset.k8s.io": "claims-c1", "clusterset.k8s.io": "claims-set"}))
		g.Expect(v.Version).To(Equal("v1.30.1"))
		g.Expect(v.Conditions).To(HaveKey("ControlPlaneHealthy"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// (ManagedCluster's own schema already bounds claim lengths; the unit
	// tests cover the length checks.) Another reconcile of the same cluster must not report again.
	framework.UpdateCluster(ctx, t, c, "claims-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Annotations = map[string]string{"touched": "yes"}
	})
	NewWithT(t).Consistently(func(g Gomega) {
		events := eventsAbout(g, ctx, "ManagedCluster", "claims-c1", "ClusterClaimsSkipped")
		g.Expect(events).To(HaveLen(1))
		g.Expect(events[0].Note).To(And(ContainSubstring(`"" (empty name)`), ContainSubstring(`"valueless" (empty value)`),
			ContainSubstring(`"good" (duplicate name`)))
	}, "2s", "200ms").Should(Succeed())
}
