//go:build linux

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// TestAgentAddonIsPlacedDeployedAndCredentialedByOCM: the chart's
// ClusterManagementAddOn places the agent on every cluster of the global
// set; OCM's addon manager enables it, the work agent applies the
// manager's manifests, the registration agent gets its hub certificate
// through a CSR the manager approves, and the kubelet runs the agent from
// the bundle's image with it. Its reports reach the profiles, and its
// certificate cannot write another cluster's addon status.
func TestAgentAddonIsPlacedDeployedAndCredentialedByOCM(t *testing.T) {
	ctx, g := begin(t)
	for _, c := range []string{"cluster1", "cluster2"} {
		g.Eventually(func(g Gomega) {
			mca := &addonv1beta1.ManagedClusterAddOn{}
			g.Expect(hub.Get(ctx, key(c, agentapi.AddonName), mca)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1beta1.ManagedClusterAddOnConditionAvailable)).To(BeTrue())
		}).Should(Succeed(), "the agent addon available on %s", c)
		g.Eventually(func(g Gomega) {
			p := &cpv1alpha1.ClusterProfile{}
			g.Expect(hub.Get(ctx, key(consumerNS, c), p)).To(Succeed())
			healthy := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
			g.Expect(healthy).NotTo(BeNil())
			// Reported by the agent: the API server is ready; no scheduler
			// runs here and kube-controller-manager does not elect a leader,
			// so neither has a Lease to judge.
			g.Expect(healthy.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(healthy.Reason).To(Equal(agentapi.ReasonAgentChecksPartiallyObserved))
			g.Expect(healthy.Message).To(ContainSubstring("no Lease kube-system/kube-scheduler"))
			nodes := meta.FindStatusCondition(p.Status.Conditions, agentapi.ConditionAllNodesHealthy)
			g.Expect(nodes).NotTo(BeNil())
			g.Expect(nodes.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(nodes.Reason).To(Equal(agentapi.ReasonAgentNodesHealthy))
			// The agent's claims, as the klusterlet carried them to the
			// ManagedCluster: the one node prepareCluster registered.
			reported := map[string]string{}
			for _, prop := range p.Status.Properties {
				if strings.HasSuffix(prop.Name, agentapi.ClaimSuffix) {
					reported[prop.Name] = prop.Value
				}
			}
			want := map[string]string{
				agentapi.ClaimNodes: "1", agentapi.ClaimNodesReady: "1",
				agentapi.ClaimCPUCapacity: "8", agentapi.ClaimCPUAllocatable: "8",
				agentapi.ClaimMemoryCapacity: "32Gi", agentapi.ClaimMemoryAllocatable: "32Gi",
				agentapi.ClaimPodsAllocatable: "110",
			}
			g.Expect(cmp.Diff(want, reported)).To(BeEmpty(), "the agent's properties (-want +got)")
		}).Should(Succeed(), "the agent's report in the profile of %s", c)
	}

	joiningNodeIsPublishedPromptly(ctx, t, g)

	cfg := agentHubConfig(ctx, t, "cluster1")
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(review.Status.UserInfo.Username).To(HavePrefix("system:open-cluster-management:cluster:cluster1:addon:" + agentapi.AddonName + ":agent:"))
	agentHub, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"conditions":[{"type":"ControlPlaneHealthy","status":"False",`+
		`"reason":"Forged","message":"written with another cluster's certificate","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`))
	for cluster, allowed := range map[string]bool{"cluster1": true, "cluster2": false} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: cluster, Verb: "patch", Group: addonv1beta1.GroupName,
				Resource: "managedclusteraddons", Subresource: "status", Name: agentapi.AddonName}}}
		g.Expect(agentHub.Create(ctx, review)).To(Succeed())
		g.Expect(review.Status.Allowed).To(Equal(allowed), "cluster1's agent may patch the addon status in %s", cluster)
	}
	other := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: agentapi.AddonName}}
	err = agentHub.Status().Patch(ctx, other, patch)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "cluster1's agent writing cluster2's addon status: %v", err)
}

// joiningNodeIsPublishedPromptly: a node joining cluster2 and leaving it
// again are significant changes of its facts, which the agent (its claims)
// and the mirror (the profile's properties) each publish within KEP-4322's
// 30 s, well inside the suite's timeout, however recently they last wrote;
// a budget that held them for minutes would miss it.
func joiningNodeIsPublishedPromptly(ctx context.Context, t *testing.T, g *WithT) {
	nodes := func(g Gomega) string {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(consumerNS, "cluster2"), p)).To(Succeed())
		for _, prop := range p.Status.Properties {
			if prop.Name == agentapi.ClaimNodes {
				return prop.Value
			}
		}
		return ""
	}
	cluster := env.Cluster("cluster2")
	cs, err := cluster.Clientset()
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	g.Expect(cluster.RegisterNode(ctx, "cluster2-joining", "4", "16Gi")).To(Succeed())
	g.Eventually(nodes).Should(Equal("2"), "the joining node in cluster2's profile")
	t.Logf("a node joining cluster2 is in its profile after %s", time.Since(start).Round(time.Second))
	start = time.Now()
	g.Expect(cs.CoreV1().Nodes().Delete(ctx, "cluster2-joining", metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(nodes).Should(Equal("1"), "the node gone from cluster2's profile")
	t.Logf("a node leaving cluster2 is out of its profile after %s", time.Since(start).Round(time.Second))
}

// agentHubConfig is the hub identity OCM gave the agent on a cluster: the
// certificate in the Secret the registration agent keeps for the addon
// (issued through a CSR), which the kubelet mounts into the agent's pod.
func agentHubConfig(ctx context.Context, t *testing.T, cluster string) *rest.Config {
	t.Helper()
	cs, err := env.Cluster(cluster).Clientset()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := cs.CoreV1().Secrets(agentapi.DefaultInstallNamespace).Get(ctx, agentapi.AddonName+"-hub-kubeconfig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if len(secret.Data[k]) == 0 {
			t.Fatalf("Secret %s/%s has no %s (keys: %s)", secret.Namespace, secret.Name, k, strings.Join(keys(secret.Data), ", "))
		}
	}
	return &rest.Config{Host: env.Hub.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: env.Hub.CAData, CertData: secret.Data[corev1.TLSCertKey], KeyData: secret.Data[corev1.TLSPrivateKeyKey]}}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAgentAddonEnabledAsClusteradmDoes: with the chart's
// agent.installStrategy Manual, OCM installs the agent only where a
// ManagedClusterAddOn enables it, as `clusteradm addon enable --names
// cluster-profile-agent --clusters cluster1` creates one. With the addon
// disabled everywhere and then enabled on cluster1, cluster1's profile
// carries the agent's report and cluster2's falls back to the klusterlet's.
func TestAgentAddonEnabledAsClusteradmDoes(t *testing.T) {
	ctx, g := begin(t)
	// The agent's claims are owned by its ClusterRole, which OCM's work
	// agent deletes with the addon, so that the garbage collector removes
	// them and none is left to feed stale facts to the hub.
	for _, c := range []string{"cluster1", "cluster2"} {
		g.Eventually(func(g Gomega) map[string]string { return agentClaimOwners(ctx, g, c) }).Should(And(HaveLen(len(agentapi.Claims)-2),
			HaveEach(Equal(agentapi.ClusterRole))), "the owners of the agent's ClusterClaims on %s (no GPU claims: no GPUs)", c)
	}

	g.Expect(env.UpgradeBundle(ctx, releaseName, releaseNamespace, map[string]any{"agent": map[string]any{"installStrategy": "Manual"}})).To(Succeed())
	t.Cleanup(func() {
		g.Expect(forgetIssuedAddonCSRs(ctx, hub, agentapi.AddonName)).To(Succeed())
		g.Expect(env.UpgradeBundle(ctx, releaseName, releaseNamespace, nil)).To(Succeed())
		g.Expect(env.WaitAddonAvailable(ctx, agentapi.AddonName)).To(Succeed())
		for _, c := range []string{"cluster1", "cluster2"} {
			g.Eventually(func() string { return controlPlaneHealthyReason(ctx, g, c) }).
				Should(Equal(agentapi.ReasonAgentChecksPartiallyObserved), "the agent's report back on %s", c)
		}
	})

	// clusteradm addon disable --names cluster-profile-agent --clusters cluster1,cluster2
	for _, c := range []string{"cluster1", "cluster2"} {
		g.Expect(client.IgnoreNotFound(hub.Delete(ctx, &addonv1beta1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: agentapi.AddonName}}))).To(Succeed())
	}
	for _, c := range []string{"cluster1", "cluster2"} {
		g.Eventually(func() string { return controlPlaneHealthyReason(ctx, g, c) }).
			Should(Equal(mirror.ReasonNoFreshAgentReport), "no agent report on %s once disabled", c)
		// The addon manager's finalizers hold the ManagedClusterAddOn until
		// its ManifestWork is gone; enabling before then would find it
		// still there, and see it go.
		g.Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, key(c, agentapi.AddonName), &addonv1beta1.ManagedClusterAddOn{}))
		}).Should(BeTrue(), "the ManagedClusterAddOn on %s deleted", c)
		g.Eventually(func(g Gomega) map[string]string { return agentClaimOwners(ctx, g, c) }).Should(BeEmpty(),
			"the garbage collector of %s deletes the agent's ClusterClaims with its ClusterRole", c)
	}

	g.Expect(forgetIssuedAddonCSRs(ctx, hub, agentapi.AddonName)).To(Succeed())
	g.Expect(env.EnableAddonOn(ctx, agentapi.AddonName, "open-cluster-management-agent-addon", "cluster1")).To(Succeed())
	g.Eventually(func() string { return controlPlaneHealthyReason(ctx, g, "cluster1") }).
		Should(Equal(agentapi.ReasonAgentChecksPartiallyObserved), "the agent's report on cluster1")
	g.Consistently(func() string { return controlPlaneHealthyReason(ctx, g, "cluster2") }, 15*time.Second, interval).
		Should(Equal(mirror.ReasonNoFreshAgentReport), "no agent report on cluster2")
	err := hub.Get(ctx, key("cluster2", agentapi.AddonName), &addonv1beta1.ManagedClusterAddOn{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "OCM enabled the addon on cluster2 by itself: %v", err)

	silent := map[string][]string{} // the doctor's notes on the agent, by cluster
	for _, row := range runDoctor(t).Rows {
		for _, note := range row.Notes {
			if strings.Contains(note, "reports nothing") {
				silent[row.Cluster] = append(silent[row.Cluster], note)
			}
		}
	}
	g.Expect(silent).To(Equal(map[string][]string{"cluster2": {
		`ControlPlaneHealthy is the klusterlet's view: cluster-profile-agent on cluster cluster2 reports nothing; the hub's admins can check its ManagedClusterAddOn in namespace cluster2 (docs/operations.md, "A cluster's agent reports nothing").`,
	}}), "the doctor's notes on the agent")
}

// agentClaimOwners maps each ClusterClaim on a managed cluster that
// carries the agent's label to the ClusterRole that owns it, checked by
// UID ("" when none does).
func agentClaimOwners(ctx context.Context, g Gomega, cluster string) map[string]string {
	claims, err := clusterclientset.NewForConfig(env.Cluster(cluster).Config)
	g.Expect(err).NotTo(HaveOccurred())
	list, err := claims.ClusterV1alpha1().ClusterClaims().List(ctx, metav1.ListOptions{LabelSelector: agentapi.ClaimLabel})
	g.Expect(err).NotTo(HaveOccurred())
	owners := map[string]string{}
	if len(list.Items) == 0 {
		return owners
	}
	cs, err := env.Cluster(cluster).Clientset()
	g.Expect(err).NotTo(HaveOccurred())
	role, err := cs.RbacV1().ClusterRoles().Get(ctx, agentapi.ClusterRole, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range list.Items {
		owners[c.Name] = ""
		for _, ref := range c.OwnerReferences {
			if ref.Kind == "ClusterRole" && ref.UID == role.UID {
				owners[c.Name] = ref.Name
			}
		}
	}
	return owners
}

// controlPlaneHealthyReason is the reason of the ControlPlaneHealthy
// condition of a cluster's profile in the shared consumer's namespace.
func controlPlaneHealthyReason(ctx context.Context, g Gomega, cluster string) string {
	p := &cpv1alpha1.ClusterProfile{}
	g.Expect(hub.Get(ctx, key(consumerNS, cluster), p)).To(Succeed())
	if c := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy); c != nil {
		return c.Reason
	}
	return ""
}
