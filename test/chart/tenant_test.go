package chart_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// revokedWithin is how soon a token copy or an access entry must leave a
// namespace the bundle's rules no longer allow it in.
const revokedWithin = 10 * time.Second

// tenantWorld is a hub where one cluster is published into two consumer
// namespaces, a tenant's own and another's; its ManagedServiceAccount's token
// is sent to both; cluster-proxy and managed-serviceaccount are installed
// (their ClusterManagementAddOns exist), their own ClusterProfile writers
// off. The manager binary runs with the chart's arguments, RBAC and
// admission policies (mirror, cluster-proxy access provider, syncer; the
// token-copies policy, which binds every user but this manager, other
// tests' managers too, has its own test), and
// the tenant has what a namespace admin has in its own namespace only: the
// admin ClusterRole there, and the right to edit ClusterProfiles there.
type tenantWorld struct {
	cluster, msa string
	// own is the tenant's namespace, other another consumer's.
	own, other string
	tenant     client.Client
}

func newTenantWorld(ctx context.Context, t *testing.T, prefix string) *tenantWorld {
	t.Helper()
	w := &tenantWorld{cluster: prefix + "-c1", msa: "multikueue", own: prefix + "-own", other: prefix + "-other"}
	installClusterProxy(ctx, t, prefix+"-proxy")
	publishFleet(ctx, t, prefix+"-set", w.cluster, w.own)
	framework.CreateNamespace(ctx, t, env.Client, w.other)
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(w.other, prefix+"-set").Bound(true).Obj())
	createSyncedMSA(ctx, t, w.cluster, w.msa)
	w.sendTokenTo(ctx, t, w.own+","+w.other)
	for _, addOn := range []string{"cluster-proxy", "managed-serviceaccount"} {
		framework.InstallUpstreamAddOn(ctx, t, env.Client, addOn)
	}
	w.tenant = namespaceAdmin(ctx, t, prefix+"-tenant", w.own)

	rel := chartrender.Release{Name: prefix, Namespace: "chart-" + prefix}
	values := gates{mirror: true, accessProvider: true, credSyncer: true}.values(false)
	startManager(ctx, t, rel, values)
	for _, ns := range []string{w.own, w.other} {
		w.expectCopy(t, ns, framework.Timeout, true)
		w.expectEntry(t, ns, framework.Timeout, true)
	}
	return w
}

// namespaceAdmin is a user with what the admin ClusterRole gives a
// namespace admin over the objects that matter here (Deployments, Secrets,
// ConfigMaps, ServiceAccounts; the control plane here runs no
// kube-controller-manager to aggregate admin's rules), and the right to
// edit ClusterProfiles there (finalizers among them), in namespace only.
func namespaceAdmin(ctx context.Context, t *testing.T, user, namespace string) client.Client {
	t.Helper()
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps", "serviceaccounts"}, Verbs: all},
		{APIGroups: []string{cpv1alpha1.GroupVersion.Group}, Resources: []string{"clusterprofiles", "clusterprofiles/status"}, Verbs: all},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	tenant := impersonate(t, user)
	if got := awaitOutcome(allowed, func() error {
		return tenant.Create(ctx, decoyManager(namespace, "managed-serviceaccount-addon-manager", "ClusterProfileCredSyncer"), client.DryRunAll)
	}); got != allowed {
		t.Fatalf("the tenant may not create Deployments in %s: %s", namespace, got)
	}
	return tenant
}

// decoyManager is a Deployment named like an upstream component's manager,
// turning that component's ClusterProfile writer on with gate.
func decoyManager(namespace, name, gate string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "manager", Image: "example.com/" + name,
					Args: []string{"manager", fmt.Sprintf("--feature-gates=%s=true", gate)}}}}}}}
}

// plantDecoy creates a decoy manager as the tenant, in its own namespace.
func (w *tenantWorld) plantDecoy(ctx context.Context, t *testing.T, name, gate string) {
	t.Helper()
	decoy := decoyManager(w.own, name, gate)
	if err := w.tenant.Create(ctx, decoy); err != nil {
		t.Fatalf("the tenant creating Deployment %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), decoy) })
}

func (w *tenantWorld) sendTokenTo(ctx context.Context, t *testing.T, namespaces string) {
	t.Helper()
	msa := &authv1beta1.ManagedServiceAccount{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: w.cluster, Name: w.msa}, msa); err != nil {
		t.Fatal(err)
	}
	framework.Update(ctx, t, env.Client, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Annotations = map[string]string{"clusterprofile.open-cluster-management.io/consumer-namespaces": namespaces}
	})
}

// holdProfile puts a finalizer on the cluster's profile in namespace, as
// c (the tenant, in its own namespace), so it lingers when deleted.
func (w *tenantWorld) holdProfile(ctx context.Context, t *testing.T, c client.Client, namespace string) {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Expect(c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: w.cluster}, p)).To(Succeed())
	p.Finalizers = append(p.Finalizers, "tenant.example.com/hold")
	NewWithT(t).Expect(c.Update(ctx, p)).To(Succeed())
	t.Cleanup(func() {
		p := &cpv1alpha1.ClusterProfile{}
		if env.Client.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: w.cluster}, p) == nil {
			p.Finalizers = nil
			_ = env.Client.Update(context.Background(), p)
		}
	})
}

func (w *tenantWorld) unbind(ctx context.Context, t *testing.T, namespace string) {
	t.Helper()
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	NewWithT(t).Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	for i := range list.Items {
		NewWithT(t).Expect(env.Client.Delete(ctx, &list.Items[i])).To(Succeed())
	}
}

// expectCopy waits at most within until namespace holds the token copy
// (present) or holds none that anyone there could read (absent: the
// tenant's own namespace is checked as the tenant).
func (w *tenantWorld) expectCopy(t *testing.T, namespace string, within time.Duration, present bool) {
	t.Helper()
	reader := client.Reader(env.Client)
	if namespace == w.own && !present {
		reader = w.tenant
	}
	start := time.Now()
	NewWithT(t).Eventually(func(g Gomega) bool {
		err := reader.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: w.cluster + "-" + w.msa}, &corev1.Secret{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return err == nil
	}, within, 50*time.Millisecond).Should(Equal(present), "a token copy in %s", namespace)
	t.Logf("copy in %s present=%v after %s", namespace, present, time.Since(start).Round(time.Millisecond))
}

// expectEntry waits at most within until the cluster's profile in namespace
// carries the open-cluster-management entry (present), or carries none or
// is gone (absent).
func (w *tenantWorld) expectEntry(t *testing.T, namespace string, within time.Duration, present bool) {
	t.Helper()
	start := time.Now()
	NewWithT(t).Eventually(func(g Gomega) bool {
		p := &cpv1alpha1.ClusterProfile{}
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: w.cluster}, p)
		if apierrors.IsNotFound(err) {
			return false
		}
		g.Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range p.Status.AccessProviders {
			names = append(names, e.Name)
		}
		sort.Strings(names)
		return len(names) == 1 && names[0] == "open-cluster-management"
	}, within, 50*time.Millisecond).Should(Equal(present), "the entry on %s/%s", namespace, w.cluster)
	t.Logf("entry in %s present=%v after %s", namespace, present, time.Since(start).Round(time.Millisecond))
}

// TestADecoySyncerDoesNotKeepATokenWhereItIsNoLongerSent: a namespace admin
// creates, in its own namespace, a Deployment named like
// managed-serviceaccount's manager with that addon's ClusterProfile syncer
// on. The bundle does not yield to it: when the ManagedServiceAccount stops
// sending its token there, the copy is gone within seconds, and a rotated
// token still reaches the other namespace.
func TestADecoySyncerDoesNotKeepATokenWhereItIsNoLongerSent(t *testing.T) {
	ctx := framework.ContextFor(t)
	w := newTenantWorld(ctx, t, "decoy-scope")
	w.plantDecoy(ctx, t, "managed-serviceaccount-addon-manager", "ClusterProfileCredSyncer")
	expectSeen(t, w.own, "managed-serviceaccount-addon-manager")

	w.sendTokenTo(ctx, t, w.other)
	w.expectCopy(t, w.own, revokedWithin, false)
	w.expectCopy(t, w.other, framework.Timeout, true)
	rotateToken(ctx, t, w.cluster, w.msa, "token-2")
	NewWithT(t).Eventually(func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: w.other, Name: w.cluster + "-" + w.msa}, s)).To(Succeed())
		return string(s.Data["token"])
	}, framework.Timeout, framework.Interval).Should(Equal("token-2"), "the syncer still writes: it did not yield to the decoy")
	expectDecoyReported(t, w.own, "managed-serviceaccount-addon-manager")
}

// TestADecoyDoesNotKeepAnythingInAnUnboundNamespace: a namespace admin's
// Deployment named like an upstream manager, its ClusterProfile writer on,
// and a finalizer holding the cluster's profile, do not keep a token copy
// or the entry (a server and CA) in a namespace whose binding is deleted:
// the tenant's own (decoy syncer, the tenant holding its profile), or
// another one (decoy access provider, that namespace's own tenant holding
// its profile). Neither is readable there within seconds.
func TestADecoyDoesNotKeepAnythingInAnUnboundNamespace(t *testing.T) {
	cases := map[string]struct {
		deployment, gate string
		// unboundIsOwn unbinds the tenant's own namespace, else the other.
		unboundIsOwn bool
	}{
		"a decoy syncer, the tenant's own namespace unbound": {deployment: "managed-serviceaccount-addon-manager", gate: "ClusterProfile", unboundIsOwn: true},
		"a decoy access provider, another namespace unbound": {deployment: "cluster-proxy-addon-manager", gate: "ClusterProfileAccessProvider"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := framework.ContextFor(t)
			w := newTenantWorld(ctx, t, "decoy-"+strings.Split(tc.deployment, "-")[0])
			w.plantDecoy(ctx, t, tc.deployment, tc.gate)
			unbound, kept, holder := w.other, w.own, env.Client
			if tc.unboundIsOwn {
				unbound, kept, holder = w.own, w.other, w.tenant
			}
			w.holdProfile(ctx, t, holder, unbound)
			expectSeen(t, w.own, tc.deployment)

			w.unbind(ctx, t, unbound)
			w.expectCopy(t, unbound, revokedWithin, false)
			w.expectEntry(t, unbound, revokedWithin, false)
			w.expectCopy(t, kept, framework.Timeout, true)
			w.expectEntry(t, kept, framework.Timeout, true)
			expectDecoyReported(t, w.own, tc.deployment)
		})
	}
}

// TestTheRealTwinsStillMakeTheBundleYieldButNeverKeepWhatItMayNot: both
// upstream writers, installed where a hub admin installs them (the upstream
// namespace, their ClusterManagementAddOns present), make the bundle yield:
// a namespace bound afterwards gets neither copy nor entry from it (the
// upstream writers would make them). Revocation goes on while it yields: a
// namespace the token is no longer sent to loses its copy, and a lingering
// profile in an unbound namespace loses its entry, within seconds.
func TestTheRealTwinsStillMakeTheBundleYieldButNeverKeepWhatItMayNot(t *testing.T) {
	ctx := framework.ContextFor(t)
	w := newTenantWorld(ctx, t, "real-twin")
	for name, gate := range map[string]string{"managed-serviceaccount-addon-manager": "ClusterProfileCredSyncer",
		"cluster-proxy-addon-manager": "ClusterProfileAccessProvider"} {
		framework.CreateUpstreamManager(ctx, t, env.Client, "open-cluster-management-addon", name, "manager", "--feature-gates="+gate+"=true")
		expectEvent(t, "open-cluster-management-addon", name, "YieldingToUpstream")
	}
	late := "real-twin-late"
	framework.CreateNamespace(ctx, t, env.Client, late)
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(late, "real-twin-set").Bound(true).Obj())
	w.sendTokenTo(ctx, t, w.own+","+w.other+","+late)
	NewWithT(t).Eventually(func() error {
		return env.Client.Get(ctx, types.NamespacedName{Namespace: late, Name: w.cluster}, &cpv1alpha1.ClusterProfile{})
	}, framework.Timeout, framework.Interval).Should(Succeed(), "the mirror has no twin here: it publishes")
	NewWithT(t).Consistently(func(g Gomega) {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: late, Name: w.cluster}, p)).To(Succeed())
		g.Expect(p.Status.AccessProviders).To(BeEmpty())
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: late, Name: w.cluster + "-" + w.msa}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no copy from the bundle while it yields")
	}, 3*time.Second, 100*time.Millisecond).Should(Succeed())

	w.sendTokenTo(ctx, t, w.other+","+late)
	w.expectCopy(t, w.own, revokedWithin, false)
	w.holdProfile(ctx, t, env.Client, w.other)
	w.unbind(ctx, t, w.other)
	w.expectEntry(t, w.other, revokedWithin, false)
	w.expectCopy(t, w.other, revokedWithin, false)
}

// expectDecoyReported waits for the TwinDecoyIgnored Event on the decoy.
func expectDecoyReported(t *testing.T, namespace, name string) {
	t.Helper()
	expectEvent(t, namespace, name, "TwinDecoyIgnored")
}

// expectSeen waits until the manager has acted on the Deployment: an Event
// says it ignores it, or that it yields to it.
func expectSeen(t *testing.T, namespace, name string) {
	t.Helper()
	expectEvent(t, namespace, name, "TwinDecoyIgnored", "YieldingToUpstream")
}

func expectEvent(t *testing.T, namespace, name string, reasons ...string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) []string {
		var in []string
		for _, reason := range reasons {
			events, err := framework.EventsAbout(context.Background(), env.Client, "Deployment", name, reason)
			g.Expect(err).NotTo(HaveOccurred())
			for _, e := range events {
				if e.Regarding.Namespace == namespace {
					in = append(in, e.Note)
				}
			}
		}
		return in
	}, framework.Timeout, framework.Interval).ShouldNot(BeEmpty(), "%v Event on Deployment %s/%s", reasons, namespace, name)
}

// rotateToken writes a new token into the ManagedServiceAccount's token
// Secret, as its agent does.
func rotateToken(ctx context.Context, t *testing.T, cluster, msa, token string) {
	t.Helper()
	s := &corev1.Secret{}
	NewWithT(t).Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: msa}, s)).To(Succeed())
	framework.Update(ctx, t, env.Client, s, func(s *corev1.Secret) { s.Data["token"] = []byte(token) })
}
