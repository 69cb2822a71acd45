// Package argocd_test runs the Argo CD integration against a real API
// server, with the mirror publishing the profiles and the cluster-proxy
// access provider the entries the cluster Secrets use.
package argocd_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

var gates = map[string]bool{string(features.ClusterProfile): true, string(features.ClusterProfileAccessProvider): true,
	string(features.ClusterProfileArgoCD): true}

// within is how soon a cluster Secret follows its profile: "within seconds".
const within = 5 * time.Second

// clusterView is what Argo CD reads of a cluster Secret.
type clusterView struct {
	Labels map[string]string
	Name   string
	Server string
	Config map[string]any
}

func viewOf(g Gomega, s *corev1.Secret) clusterView {
	config := map[string]any{}
	g.Expect(json.Unmarshal(s.Data["config"], &config)).To(Succeed())
	return clusterView{Labels: s.Labels, Name: string(s.Data["name"]), Server: string(s.Data["server"]), Config: config}
}

// want is the cluster Secret of cluster in namespace, published through set.
func want(namespace, cluster, set string, ca []byte) clusterView {
	return clusterView{
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster", argocd.LabelCreatedBy: "open-cluster-management",
			"x-k8s.io/cluster-manager": "open-cluster-management", "open-cluster-management.io/cluster-name": cluster,
			"multicluster.x-k8s.io/clusterset": set, "cluster.clusterset.k8s.io": cluster, "clusterset.k8s.io": set},
		Name:   cluster,
		Server: "https://cluster-proxy-addon-user." + framework.ClusterProxyNamespace + ":9092/" + cluster,
		Config: map[string]any{
			"execProviderConfig": map[string]any{"command": "/plugins/cp-creds", "args": []any{"--managed-serviceaccount=argocd"},
				"apiVersion": "client.authentication.k8s.io/v1", "provideClusterInfo": true, "config": map[string]any{"clusterName": cluster}},
			"tlsClientConfig": map[string]any{"insecure": false, "caData": b64(ca)},
		},
	}
}

// secrets reads the cluster Secrets of namespace by name.
func secrets(g Gomega, ctx context.Context, namespace string) map[string]clusterView {
	list := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace),
		client.MatchingLabels{"argocd.argoproj.io/secret-type": "cluster"})).To(Succeed())
	out := map[string]clusterView{}
	for i := range list.Items {
		out[list.Items[i].Name] = viewOf(g, &list.Items[i])
	}
	return out
}

func expectSecrets(t *testing.T, ctx context.Context, namespace string, wait time.Duration, want map[string]clusterView) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) map[string]clusterView { return secrets(g, ctx, namespace) },
		wait, 50*time.Millisecond).Should(Equal(want), "cluster Secrets in %s", namespace)
}

// TestEveryPublishedProfileIsAnArgoCDCluster: each profile the hub publishes
// in Argo CD's namespace gets a cluster Secret that reaches the cluster
// through the cluster-proxy entry with cp-creds; a rotated CA, a label
// added to a profile and a binding deleted follow within seconds; nothing
// is written for a profile elsewhere or one someone forged in Argo CD's
// namespace, and a hand-made Secret of a cluster's name is left alone and
// reported.
func TestEveryPublishedProfileIsAnArgoCDCluster(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	ca := framework.InstallClusterProxy(ctx, t, c, []byte("CA-1"))
	for _, ns := range []string{"argocd", "team-a"} {
		framework.CreateNamespace(ctx, t, c, ns)
	}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("gitops").Obj())
	for _, name := range []string{"ac-c1", "ac-c2", "ac-c3"} {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(name).ClusterSet("gitops").Obj())
	}
	handMade := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-ac-c3",
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		Data: map[string][]byte{"name": []byte("ac-c3"), "server": []byte("https://ac-c3.example"), "config": []byte("{}")}}
	NewWithT(t).Expect(c.Create(ctx, handMade)).To(Succeed())
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("argocd", "gitops").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("team-a", "gitops").Bound(true).Obj())
	framework.CreateForgedProfile(ctx, t, c, utiltesting.MakeClusterProfile("argocd", "ac-forged", "open-cluster-management").Obj())

	expectSecrets(t, ctx, "argocd", framework.Timeout, map[string]clusterView{
		"cluster-ac-c1": want("argocd", "ac-c1", "gitops", []byte("CA-1")),
		"cluster-ac-c2": want("argocd", "ac-c2", "gitops", []byte("CA-1")),
		"cluster-ac-c3": viewOf(NewWithT(t), handMade),
	})
	expectSecrets(t, ctx, "team-a", time.Second, map[string]clusterView{})
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, ctx, "ac-c3", argocd.ReasonNameTaken)
	}, framework.Timeout, framework.Interval).Should(HaveLen(1), "the hand-made Secret is reported")

	// A rotated CA and a label added to a profile follow within seconds.
	framework.Update(ctx, t, c, ca, func(s *corev1.Secret) { s.Data["tls.crt"] = []byte("CA-2") })
	profile := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Expect(c.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "ac-c1"}, profile)).To(Succeed())
	framework.Update(ctx, t, c, profile, func(p *cpv1alpha1.ClusterProfile) { p.Labels["env"] = "prod" })
	c1 := want("argocd", "ac-c1", "gitops", []byte("CA-2"))
	c1.Labels["env"] = "prod"
	expectSecrets(t, ctx, "argocd", within, map[string]clusterView{
		"cluster-ac-c1": c1,
		"cluster-ac-c2": want("argocd", "ac-c2", "gitops", []byte("CA-2")),
		"cluster-ac-c3": viewOf(NewWithT(t), handMade),
	})

	// The hand-made Secret deleted, ours takes the name.
	NewWithT(t).Expect(c.Delete(ctx, handMade)).To(Succeed())
	c3 := want("argocd", "ac-c3", "gitops", []byte("CA-2"))
	expectSecrets(t, ctx, "argocd", within, map[string]clusterView{
		"cluster-ac-c1": c1, "cluster-ac-c2": want("argocd", "ac-c2", "gitops", []byte("CA-2")), "cluster-ac-c3": c3,
	})

	// The binding goes: every cluster Secret goes within seconds.
	NewWithT(t).Expect(c.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{
		Namespace: "argocd", Name: "gitops"}})).To(Succeed())
	expectSecrets(t, ctx, "argocd", within, map[string]clusterView{})
}

// TestTakesOverFromTheLabsController follows docs/consumers.md's "Moving from
// the labs controller": what argoproj-labs' clusterprofile-integration-for-argocd
// leaves once stopped (its cluster-<profile> Secrets, labelled with the
// profile's origin, and its finalizer on the profiles) holds the names
// (reported) until the two commands of the docs remove it; then the
// bundle's Secrets take the names, and a profile that goes is not held by
// the finalizer.
func TestTakesOverFromTheLabsController(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallClusterProxy(ctx, t, c, []byte("CA-1"))
	const ns = "argocd-labs"
	framework.CreateNamespace(ctx, t, c, ns)
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("labs").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("lab-c1").ClusterSet("labs").Obj())
	labs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-lab-c1",
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster", labsOrigin: ns + "-lab-c1"}},
		Data: map[string][]byte{"name": []byte("lab-c1"), "server": []byte("https://lab-c1.example"), "config": []byte("{}")}}
	NewWithT(t).Expect(c.Create(ctx, labs)).To(Succeed())
	framework.StartManager(t, env, framework.ManagerOptions{Gates: gates, ArgoCD: argocd.Settings{Namespace: ns}})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, "labs").Bound(true).Obj())
	profile := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Eventually(func() error {
		return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "lab-c1"}, profile)
	}, framework.Timeout, framework.Interval).Should(Succeed())
	framework.Update(ctx, t, c, profile, func(p *cpv1alpha1.ClusterProfile) { p.Finalizers = append(p.Finalizers, labsFinalizer) })
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, ctx, "lab-c1", argocd.ReasonNameTaken)
	}, framework.Timeout, framework.Interval).Should(HaveLen(1), "the labs controller's Secret is reported")
	expectSecrets(t, ctx, ns, time.Second, map[string]clusterView{"cluster-lab-c1": viewOf(NewWithT(t), labs)})

	// kubectl -n argocd delete secret -l argocd.argoproj.io/cluster-profile-origin
	NewWithT(t).Expect(c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(ns), client.HasLabels{labsOrigin})).To(Succeed())
	expectSecrets(t, ctx, ns, within, map[string]clusterView{"cluster-lab-c1": want(ns, "lab-c1", "labs", []byte("CA-1"))})
	// kubectl -n argocd patch clusterprofile lab-c1 --type json -p '[{"op": "test", …}, {"op": "remove", …}]'
	removeLabsFinalizer := []byte(`[{"op": "test", "path": "/metadata/finalizers/0", "value": "argoproj.io/cluster-profile-finalizer"},
		{"op": "remove", "path": "/metadata/finalizers/0"}]`)
	NewWithT(t).Expect(c.Patch(ctx, profile, client.RawPatch(types.JSONPatchType, removeLabsFinalizer))).To(Succeed())

	NewWithT(t).Expect(c.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "labs"}})).To(Succeed())
	NewWithT(t).Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "lab-c1"}, &cpv1alpha1.ClusterProfile{}))
	}, framework.Timeout, framework.Interval).Should(BeTrue(), "no finalizer holds the profile")
	expectSecrets(t, ctx, ns, within, map[string]clusterView{})
}

// What argoproj-labs/clusterprofile-integration-for-argocd marks: its cluster
// Secrets' origin label and its finalizer on the profiles it read.
const (
	labsOrigin    = "argocd.argoproj.io/cluster-profile-origin"
	labsFinalizer = "argoproj.io/cluster-profile-finalizer"
)

// TestNoEntryNoClusterSecret: with the access provider the cluster Secrets
// use turned off, a published profile gets none, and the profile says why.
func TestNoEntryNoClusterSecret(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.CreateNamespace(ctx, t, c, "argocd-direct")
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("noentry").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("ne-c1").ClusterSet("noentry").Obj())
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{string(features.ClusterProfile): true,
		string(features.ClusterProfileArgoCD): true}, ArgoCD: argocd.Settings{Namespace: "argocd-direct"}})
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("argocd-direct", "noentry").Bound(true).Obj())
	NewWithT(t).Eventually(func(g Gomega) []string {
		return eventNotes(g, ctx, "ne-c1", argocd.ReasonNoEntry)
	}, framework.Timeout, framework.Interval).Should(HaveLen(1))
	expectSecrets(t, ctx, "argocd-direct", time.Second, map[string]clusterView{})
	err := c.Get(ctx, types.NamespacedName{Namespace: "argocd-direct", Name: "cluster-ne-c1"}, &corev1.Secret{})
	NewWithT(t).Expect(apierrors.IsNotFound(err)).To(BeTrue())
}

func eventNotes(g Gomega, ctx context.Context, profile, reason string) []string {
	events, err := framework.EventsAbout(ctx, env.Client, "ClusterProfile", profile, reason)
	g.Expect(err).NotTo(HaveOccurred())
	var notes []string
	for _, e := range events {
		notes = append(notes, e.Note)
	}
	return notes
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }
