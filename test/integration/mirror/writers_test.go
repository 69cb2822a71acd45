package mirror_test

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// applyAs sends a Server-Side Apply request as another field manager.
func applyAs(t *testing.T, manager string, status bool, body string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(body), &u.Object); err != nil {
		t.Fatal(err)
	}
	ac := client.ApplyConfigurationFromUnstructured(u)
	var err error
	if status {
		err = env.Client.Status().Apply(framework.ContextFor(t), ac, client.FieldOwner(manager), client.ForceOwnership)
	} else {
		err = env.Client.Apply(framework.ContextFor(t), ac, client.FieldOwner(manager), client.ForceOwnership)
	}
	if err != nil {
		t.Fatalf("applying as %s: %v", manager, err)
	}
}

func TestOtherWritersEntriesSurviveEveryReconcile(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "others-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("others-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("others-c1").ClusterSet("others-set").
		Version("v1.30.0").Claim("region", "eu").Available(metav1.ConditionTrue).Joined().Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("others-ns", "others-set").Bound(true).Obj())
	expectProfilesIn(t, ctx, "others-c1", "others-ns")

	head := `"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile","metadata":{"name":"others-c1","namespace":"others-ns"`
	applyAs(t, "third-party", false, `{`+head+`,"labels":{"team":"blue"}}}`)
	applyAs(t, "third-party", true, `{`+head+`},"status":{
		"conditions":[{"type":"ThirdPartyReady","status":"True","reason":"Checked","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}],
		"properties":[{"name":"cost-center.example.com","value":"42"}],
		"accessProviders":[{"name":"example-provider","cluster":{"server":"https://example.invalid:6443"}}]}}`)

	// The mirror rewrites its own entries, twice, then drops all of them.
	framework.UpdateClusterStatus(ctx, t, c, "others-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status.Version.Kubernetes = "v1.31.0"
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "us"}, {Name: "zone", Value: "a"}}
	})
	expectThirdParty := func(g Gomega, p *cpv1alpha1.ClusterProfile) {
		v := utiltesting.ViewOf(p)
		g.Expect(v.Labels).To(HaveKeyWithValue("team", "blue"))
		g.Expect(v.Conditions).To(HaveKeyWithValue("ThirdPartyReady", utiltesting.ConditionView{Status: "True", Reason: "Checked"}))
		g.Expect(v.Properties).To(HaveKeyWithValue("cost-center.example.com", "42"))
		g.Expect(v.Providers).To(Equal([]string{"example-provider"}))
	}
	NewWithT(t).Eventually(func(g Gomega) {
		p := getProfile(g, ctx, "others-ns", "others-c1")
		expectThirdParty(g, p)
		g.Expect(utiltesting.ViewOf(p).Properties).To(Equal(map[string]string{"cost-center.example.com": "42", "region": "us", "zone": "a",
			"cluster.clusterset.k8s.io": "others-c1", "clusterset.k8s.io": "others-set"}))
		g.Expect(p.Status.Version.Kubernetes).To(Equal("v1.31.0"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	framework.UpdateClusterStatus(ctx, t, c, "others-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Status = clusterv1.ManagedClusterStatus{}
	})
	NewWithT(t).Eventually(func(g Gomega) {
		p := getProfile(g, ctx, "others-ns", "others-c1")
		expectThirdParty(g, p)
		g.Expect(utiltesting.ViewOf(p).Properties).To(Equal(map[string]string{"cost-center.example.com": "42",
			"cluster.clusterset.k8s.io": "others-c1", "clusterset.k8s.io": "others-set"}))
		g.Expect(utiltesting.ViewOf(p).Conditions).To(HaveLen(1))
		g.Expect(p.Status.Version.Kubernetes).To(BeEmpty())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestRestoresItsFieldsWhenSomeoneElseChangesThem(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "restore-ns")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("restore-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("restore-c1").ClusterSet("restore-set").
		Available(metav1.ConditionTrue).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("restore-ns", "restore-set").Bound(true).Obj())
	expectProfilesIn(t, ctx, "restore-c1", "restore-ns")

	profile := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "restore-ns", Name: "restore-c1"}}
	framework.Update(ctx, t, c, profile, func(p *cpv1alpha1.ClusterProfile) {
		p.Labels["multicluster.x-k8s.io/clusterset"] = "hand-edited"
	})
	framework.UpdateStatus(ctx, t, c, profile, func(p *cpv1alpha1.ClusterProfile) {
		for i := range p.Status.Conditions {
			p.Status.Conditions[i].Status = metav1.ConditionFalse
			p.Status.Conditions[i].Reason = "HandEdited"
		}
	})
	NewWithT(t).Eventually(func(g Gomega) {
		v := utiltesting.ViewOf(getProfile(g, ctx, "restore-ns", "restore-c1"))
		g.Expect(v.Labels).To(HaveKeyWithValue("multicluster.x-k8s.io/clusterset", "restore-set"))
		g.Expect(v.Conditions).To(HaveKeyWithValue("ControlPlaneHealthy", utiltesting.ConditionView{
			Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "Managed cluster is available"}))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestForeignProfileIsUntouchedAndTheClashReportedOnce(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateNamespace(ctx, t, c, "clash-ns")
	foreign := utiltesting.MakeClusterProfile("clash-ns", "clash-c1", "other-manager").Obj()
	bystander := utiltesting.MakeClusterProfile("clash-ns", "unrelated", "other-manager").Obj()
	for _, p := range []*cpv1alpha1.ClusterProfile{foreign, bystander} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("clash-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("clash-c1").ClusterSet("clash-set").Version("v1.30.0").Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("clash-ns", "clash-set").Bound(true).Obj())

	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ManagedCluster", "clash-c1", "ClusterProfileNameClash")).To(HaveLen(1))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	framework.UpdateCluster(ctx, t, c, "clash-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Annotations = map[string]string{"touched": "yes"}
	})
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(eventsAbout(g, ctx, "ManagedCluster", "clash-c1", "ClusterProfileNameClash")).To(HaveLen(1))
		for _, p := range []*cpv1alpha1.ClusterProfile{foreign, bystander} {
			got := getProfile(g, ctx, p.Namespace, p.Name)
			g.Expect(got.ResourceVersion).To(Equal(p.ResourceVersion), "%s must not be written", p.Name)
		}
	}, "2s", "200ms").Should(Succeed())

	// Once the other manager's profile is gone, the mirror publishes its own.
	if err := c.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(getProfile(g, ctx, "clash-ns", "clash-c1").Spec.ClusterManager.Name).To(Equal("open-cluster-management"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestAnUnchangedWorldCostsNoWrites(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	counter := framework.NewRequestCounter("clusterprofiles", "writes-")
	stop := framework.StartManager(t, env, framework.ManagerOptions{Counter: counter})
	for _, ns := range []string{"writes-a", "writes-b", "writes-c"} {
		framework.CreateNamespace(ctx, t, c, ns)
	}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("writes-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("writes-c1").ClusterSet("writes-set").
		Version("v1.30.0").Claim("region", "eu").Available(metav1.ConditionTrue).Joined().Obj())
	for _, ns := range []string{"writes-a", "writes-b", "writes-c"} {
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, "writes-set").Bound(true).Obj())
	}
	expectProfilesIn(t, ctx, "writes-c1", "writes-a", "writes-b", "writes-c")
	NewWithT(t).Eventually(func(g Gomega) {
		for _, ns := range []string{"writes-a", "writes-b", "writes-c"} {
			g.Expect(utiltesting.ViewOf(getProfile(g, ctx, ns, "writes-c1")).Conditions).To(HaveLen(2))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
	// Exactly one create and one status write per profile.
	expectWrites(t, counter, 6)

	// Events that change nothing the profiles show cost nothing.
	framework.UpdateCluster(ctx, t, c, "writes-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Annotations = map[string]string{"touched": "yes"}
	})
	expectWrites(t, counter, 6)

	// Nor does a restart, which reconciles everything from scratch.
	stop()
	restarted := framework.NewRequestCounter("clusterprofiles", "writes-")
	framework.StartManager(t, env, framework.ManagerOptions{Counter: restarted})
	expectWrites(t, restarted, 0)

	// A condition change is one status write per profile.
	framework.UpdateClusterStatus(ctx, t, c, "writes-c1", func(mc *clusterv1.ManagedCluster) {
		w := utiltesting.MakeManagedCluster("x")
		w.Status = mc.Status
		mc.Status = w.Available(metav1.ConditionFalse).Obj().Status
	})
	NewWithT(t).Eventually(func(g Gomega) {
		for _, ns := range []string{"writes-a", "writes-b", "writes-c"} {
			g.Expect(utiltesting.ViewOf(getProfile(g, ctx, ns, "writes-c1")).Conditions["ControlPlaneHealthy"].Status).To(Equal(metav1.ConditionFalse))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectWrites(t, restarted, 3)
}

// expectWrites checks the count settles at want and stays there.
func expectWrites(t *testing.T, counter *framework.RequestCounter, want int) {
	t.Helper()
	NewWithT(t).Consistently(counter.Writes, 2*time.Second, 100*time.Millisecond).Should(Equal(want),
		"ClusterProfile write requests (by method: %v)", counter.ByMethod())
}
