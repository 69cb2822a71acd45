// Package agenthub_test runs the hub side of the cluster-profile-agent on a
// real API server: the addon-framework deploys the agent's manifests and
// grants its hub identity exactly one right, and the mirror folds the
// agent's reports into the cluster's profiles.
package agenthub_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

var agentGates = map[string]bool{"ClusterProfile": true, "ClusterProfileAgent": true}

// publish creates a cluster in a bound set and the agent's addon for it, as
// an install strategy would (OCM's addon manager also makes the
// ClusterManagementAddOn the addon's owner, which the framework waits for).
func publish(ctx context.Context, t *testing.T, cma *addonapiv1beta1.ClusterManagementAddOn, set, namespace string, clusters ...string) {
	t.Helper()
	c := env.Client
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(set).Obj())
	framework.CreateNamespace(ctx, t, c, namespace)
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(namespace, set).Bound(true).Obj())
	for _, cluster := range clusters {
		framework.CreateNamespace(ctx, t, c, cluster)
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(cluster).ClusterSet(set).
			Available(metav1.ConditionTrue).Joined().Obj())
		addon := &addonapiv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: agentapi.AddonName,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "addon.open-cluster-management.io/v1beta1",
				Kind: "ClusterManagementAddOn", Name: cma.Name, UID: cma.UID}}}}
		if err := c.Create(ctx, addon); err != nil {
			t.Fatalf("creating the addon of %s: %v", cluster, err)
		}
	}
}

func createClusterManagementAddOn(ctx context.Context, t *testing.T) *addonapiv1beta1.ClusterManagementAddOn {
	t.Helper()
	cma := &addonapiv1beta1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: agentapi.AddonName},
		Spec: addonapiv1beta1.ClusterManagementAddOnSpec{
			AddOnMeta:       addonapiv1beta1.AddOnMeta{DisplayName: "ClusterProfile agent"},
			InstallStrategy: addonapiv1beta1.InstallStrategy{Type: addonapiv1beta1.AddonInstallStrategyManual},
		},
	}
	if err := env.Client.Create(ctx, cma); err != nil {
		t.Fatalf("creating the ClusterManagementAddOn: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cma) })
	return cma
}

func TestTheAddonDeploysTheAgentAndLimitsItsHubIdentity(t *testing.T) {
	ctx := framework.ContextFor(t)
	g := NewWithT(t)
	cma := createClusterManagementAddOn(ctx, t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: agentGates})
	publish(ctx, t, cma, "deploy-set", "deploy-ns", "deploy-c1", "deploy-c2")

	// The agent's manifests reach the cluster through a ManifestWork.
	g.Eventually(func(g Gomega) {
		works := &workv1.ManifestWorkList{}
		g.Expect(workClient(t).List(ctx, works, client.InNamespace("deploy-c1"))).To(Succeed())
		g.Expect(works.Items).NotTo(BeEmpty())
		var deployment *appsv1.Deployment
		for _, m := range works.Items[0].Spec.Workload.Manifests {
			d := &appsv1.Deployment{}
			if json.Unmarshal(m.Raw, d) == nil && d.Kind == "Deployment" {
				deployment = d
			}
		}
		g.Expect(deployment).NotTo(BeNil(), "the agent Deployment")
		g.Expect(deployment.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--cluster-name=deploy-c1"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// Its hub identity may write its own addon's status and nothing else.
	// The identity is what its certificate says: the cluster's agent user,
	// the cluster's addon group and the group every cluster's agent shares.
	agentOf := func(cluster string) client.Client {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: "system:open-cluster-management:cluster:" + cluster + ":addon:" + agentapi.AddonName + ":agent:" + agentapi.AgentName,
			Groups: []string{"system:open-cluster-management:cluster:" + cluster + ":addon:" + agentapi.AddonName,
				"system:open-cluster-management:addon:" + agentapi.AddonName, "system:authenticated"},
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	report := func(c client.Client, cluster string) error {
		addon := &addonapiv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: agentapi.AddonName,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "addon.open-cluster-management.io/v1beta1",
				Kind: "ClusterManagementAddOn", Name: cma.Name, UID: cma.UID}}}}
		patch := []byte(`{"status":{"conditions":[{"type":"ControlPlaneHealthy","status":"True","reason":"AgentChecksPassed","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
		return c.Status().Patch(ctx, addon, client.RawPatch(types.MergePatchType, patch))
	}
	g.Eventually(func() error { return report(agentOf("deploy-c1"), "deploy-c1") }, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(report(agentOf("deploy-c1"), "deploy-c2")).To(MatchError(ContainSubstring("forbidden")), "another cluster's addon")
	g.Expect(agentOf("deploy-c1").Update(ctx, &addonapiv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{
		Namespace: "deploy-c1", Name: agentapi.AddonName}})).To(MatchError(ContainSubstring("forbidden")), "the addon's spec")
	g.Expect(agentOf("deploy-c1").List(ctx, &cpv1alpha1.ClusterProfileList{})).To(MatchError(ContainSubstring("forbidden")))

	// The grant names the cluster's own agent user and nobody else, even
	// when the agent rewrites the subjects of its registration (its status).
	g.Expect(report(agentOf("deploy-c1"), "deploy-c1")).To(Succeed())
	registrations := []byte(`{"status":{"registrations":[{"type":"kubeClient","kubeClient":{"subject":{"user":"mallory",` +
		`"groups":["system:masters","system:open-cluster-management:addon:cluster-profile-agent"]}}}]}}`)
	g.Expect(agentOf("deploy-c1").Status().Patch(ctx, &addonapiv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{
		Namespace: "deploy-c1", Name: agentapi.AddonName}}, client.RawPatch(types.MergePatchType, registrations))).To(Succeed())
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: addon.AgentUser("deploy-c1")}}
	g.Consistently(func(g Gomega) []rbacv1.Subject {
		binding := &rbacv1.RoleBinding{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "deploy-c1", Name: addon.HubRole().Name}, binding)).To(Succeed())
		return binding.Subjects
	}, 2*time.Second, 100*time.Millisecond).Should(Equal(wantSubjects))
}

func TestProfilesCarryTheAgentsReportWhileItIsFresh(t *testing.T) {
	ctx := framework.ContextFor(t)
	cma := createClusterManagementAddOn(ctx, t)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: agentGates})
	publish(ctx, t, cma, "fold-set", "fold-ns", "fold-c1")

	setAddonConditions := func(available metav1.ConditionStatus, extra ...metav1.Condition) {
		t.Helper()
		framework.UpdateStatus(ctx, t, env.Client, &addonapiv1beta1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "fold-c1", Name: agentapi.AddonName}}, func(a *addonapiv1beta1.ManagedClusterAddOn) {
			conditions := []metav1.Condition{{Type: "Available", Status: available, Reason: "ProbeSucceeded", LastTransitionTime: utiltesting.ConditionTime}}
			for _, c := range a.Status.Conditions {
				if c.Type != "Available" && c.Type != agentapi.ConditionControlPlaneHealthy && c.Type != agentapi.ConditionAllNodesHealthy {
					conditions = append(conditions, c)
				}
			}
			a.Status.Conditions = append(conditions, extra...)
		})
	}
	conditions := func(g Gomega) map[string]string {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "fold-ns", Name: "fold-c1"}, p)).To(Succeed())
		out := map[string]string{}
		for _, c := range p.Status.Conditions {
			out[c.Type] = strings.Join([]string{string(c.Status), c.Reason, c.Message}, "|")
		}
		return out
	}

	setAddonConditions(metav1.ConditionTrue,
		metav1.Condition{Type: agentapi.ConditionControlPlaneHealthy, Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentChecksFailed,
			Message: "kube-scheduler: leader lease not renewed for 5m0s", LastTransitionTime: utiltesting.ConditionTime},
		metav1.Condition{Type: agentapi.ConditionAllNodesHealthy, Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentNodesHealthy,
			Message: "3/3 nodes Ready", LastTransitionTime: utiltesting.ConditionTime})
	NewWithT(t).Eventually(conditions, framework.Timeout, framework.Interval).Should(And(
		HaveKeyWithValue("ControlPlaneHealthy", "False|AgentChecksFailed|kube-scheduler: leader lease not renewed for 5m0s"),
		HaveKeyWithValue("AllNodesHealthy", "True|AgentNodesHealthy|3/3 nodes Ready"),
		HaveKeyWithValue("Joined", "True|ManagedClusterJoined|Managed cluster joined"),
	))

	// The agent stops renewing its lease: the klusterlet marks the addon
	// unavailable, and the profiles fall back to the klusterlet's view.
	setAddonConditions(metav1.ConditionUnknown)
	NewWithT(t).Eventually(conditions, framework.Timeout, framework.Interval).Should(And(
		HaveKeyWithValue("ControlPlaneHealthy", "True|NoFreshAgentReport|No fresh report from cluster-profile-agent; "+
			"the klusterlet reports ManagedClusterAvailable: Managed cluster is available"),
		Not(HaveKey("AllNodesHealthy")),
	))
}

// workClient reads ManifestWorks, which only the addon-framework writes.
func workClient(t *testing.T) client.Client {
	s := scheme.New()
	if err := workv1.Install(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
