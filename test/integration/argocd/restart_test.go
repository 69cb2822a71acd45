package argocd_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestOneWritePerSecretAndARestartQueuesArgoCDsProfilesOnly: a fleet
// published at once gets one write per cluster Secret; a restarted
// manager's Argo CD controller queues one key per profile in Argo CD's
// namespace, not one per profile on the hub, though every cluster, set,
// binding and the proxy's configuration hand it an event at a start, nor
// one per Secret there that only starts like a cluster Secret (a token
// copy of a cluster named cluster-*); the resync writes nothing.
func TestOneWritePerSecretAndARestartQueuesArgoCDsProfilesOnly(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallClusterProxy(ctx, t, c, []byte("CA-1"))
	const ns = "argocd-rs"
	clusters := []string{"rs-c1", "rs-c2", "rs-c3", "rs-c4", "rs-c5"}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("rs-set").Obj())
	for _, name := range clusters {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(name).ClusterSet("rs-set").Obj())
	}
	opts := framework.ManagerOptions{Gates: gates, ArgoCD: argocd.Settings{Namespace: ns}}
	writes := framework.NewRequestCounter("secrets", ns)
	opts.Counter = writes
	stop := framework.StartManager(t, env, opts)
	for _, namespace := range []string{ns, "rs-a", "rs-b", "rs-c"} {
		framework.CreateNamespace(ctx, t, c, namespace)
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(namespace, "rs-set").Bound(true).Obj())
	}
	wantSecrets := map[string]clusterView{}
	for _, name := range clusters {
		wantSecrets["cluster-"+name] = want(ns, name, "rs-set", []byte("CA-1"))
	}
	expectSecrets(t, ctx, ns, framework.Timeout, wantSecrets)
	NewWithT(t).Expect(writes.Settled()).To(Equal(len(clusters)), "one write per Secret: %v", writes.Requests())
	stop()
	tokenCopy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-rs-c1-kueue"}}
	NewWithT(t).Expect(c.Create(ctx, tokenCopy)).To(Succeed())

	before := framework.KeysQueued(t, argocd.ControllerName)
	versions := secretVersions(ctx, t, ns)
	opts.Counter = nil
	framework.StartManager(t, env, opts)

	keys := framework.ProfileNames(ctx, t, env.Client, client.InNamespace(ns))
	if all := framework.ProfileNames(ctx, t, env.Client); all.Len() <= keys.Len() {
		t.Fatalf("the hub holds %d profiles, Argo CD's namespace %d keys: nothing to tell apart", all.Len(), keys.Len())
	}
	framework.ExpectKeysQueued(t, before, map[string]float64{argocd.ControllerName: float64(keys.Len())})
	NewWithT(t).Expect(secretVersions(ctx, t, ns)).To(Equal(versions), "Secrets written by the restart")
}

// secretVersions is the resourceVersion of every cluster-<name> Secret in
// namespace, by name.
func secretVersions(ctx context.Context, t *testing.T, namespace string) map[string]string {
	t.Helper()
	list := &corev1.SecretList{}
	if err := env.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		if strings.HasPrefix(s.Name, argocd.SecretPrefix) {
			out[s.Name] = s.ResourceVersion
		}
	}
	return out
}
