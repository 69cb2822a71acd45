//go:build linux

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// TestRealTokenIsSyncedAndRotationKeepsTheConsumerWorking: the token the
// managed-serviceaccount agent got from a real TokenRequest on cluster1 is
// copied next to the profile; a consumer configured as the seed's
// MultiKueue reaches cluster1 with it through cp-creds. A forced rotation
// (the token Secret deleted on the hub, so the agent requests a new token)
// reaches the copy and the consumer keeps working; unbinding the set
// revokes the copy.
func TestRealTokenIsSyncedAndRotationKeepsTheConsumerWorking(t *testing.T) {
	ctx, g := begin(t)
	const ns, cluster = "e2e-tokens", "cluster1"
	g.Expect(bindSet(ctx, ns, defaultSet)).To(Succeed())
	c, err := newConsumer(ctx, ns)
	g.Expect(err).NotTo(HaveOccurred())
	source := key(cluster, msaName)
	copyKey := key(ns, cluster+"-"+msaName)

	var first string
	g.Eventually(func(g Gomega) {
		first = syncedToken(ctx, g, source, copyKey)
	}).Should(Succeed(), "the agent's token, copied")
	g.Eventually(func() error { _, err := c.ListNamespaces(ctx, cluster); return err }).Should(Succeed())

	g.Expect(hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msaName}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(syncedToken(ctx, g, source, copyKey)).NotTo(Equal(first))
	}).Should(Succeed(), "the rotated token, copied")
	g.Eventually(func() error { _, err := c.ListNamespaces(ctx, cluster); return err }).Should(Succeed())

	g.Expect(hub.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: defaultSet}})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(hub.Get(ctx, copyKey, &corev1.Secret{}))
	}).Should(BeTrue(), "the copy revoked with the binding")
	stderr := runCPCreds(t, c.Providers[0].ExecConfig.Env[0].Value, ns, cluster)
	g.Expect(stderr).To(ContainSubstring("secret " + ns + "/" + cluster + "-" + msaName + " not found"))
}

// syncedToken is the token of the agent's Secret on the hub, once the copy
// holds the same.
func syncedToken(ctx context.Context, g Gomega, source, copyKey types.NamespacedName) string {
	original, synced := &corev1.Secret{}, &corev1.Secret{}
	g.Expect(hub.Get(ctx, source, original)).To(Succeed())
	g.Expect(hub.Get(ctx, copyKey, synced)).To(Succeed())
	g.Expect(original.Data["token"]).NotTo(BeEmpty())
	g.Expect(string(synced.Data["token"])).To(Equal(string(original.Data["token"])))
	return string(original.Data["token"])
}

// runCPCreds runs cp-creds as client-go would for the cluster and returns
// its stderr; it must fail.
func runCPCreds(t *testing.T, kubeconfig, namespace, cluster string) string {
	t.Helper()
	cmd := exec.Command(cpCreds, "--managed-serviceaccount="+msaName)
	cmd.Env = append(os.Environ(), "NAMESPACE="+namespace, "KUBECONFIG="+kubeconfig,
		`KUBERNETES_EXEC_INFO={"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,`+
			`"cluster":{"server":"`+env.Proxy.URL+"/"+cluster+`","config":{"clusterName":"`+cluster+`"}}}}`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("cp-creds succeeded without a synced token")
	}
	return stderr.String()
}

// TestGarbageCollectorDeletesTheCopyWithItsProfile: a profile deleted by
// hand takes its token copy with it through the copy's ownerReference
// (kube-controller-manager's garbage collector), and the mirror and the
// syncer recreate both.
func TestGarbageCollectorDeletesTheCopyWithItsProfile(t *testing.T) {
	ctx, g := begin(t)
	const cluster = "cluster2"
	profile, copied := &cpv1alpha1.ClusterProfile{}, &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, key(consumerNS, cluster), profile)).To(Succeed())
		g.Expect(hub.Get(ctx, key(consumerNS, cluster+"-"+msaName), copied)).To(Succeed())
	}).Should(Succeed())
	g.Expect(copied.OwnerReferences).To(ContainElement(HaveField("UID", profile.UID)))
	g.Expect(hub.Delete(ctx, profile)).To(Succeed())
	g.Eventually(func(g Gomega) {
		p, s := &cpv1alpha1.ClusterProfile{}, &corev1.Secret{}
		g.Expect(hub.Get(ctx, key(consumerNS, cluster), p)).To(Succeed())
		g.Expect(p.UID).NotTo(Equal(profile.UID))
		g.Expect(hub.Get(ctx, key(consumerNS, cluster+"-"+msaName), s)).To(Succeed())
		g.Expect(s.UID).NotTo(Equal(copied.UID), "the old copy must have been collected")
		g.Expect(s.OwnerReferences).To(ContainElement(HaveField("UID", p.UID)))
	}).Should(Succeed(), "profile and copy recreated")
}
