package reliability_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// Names may have 253 characters, label values 63. A cluster or set name
// that cannot be a label value is published without that label (a set that
// can takes its place where one is bound), reported once, and the rest of
// the fleet is published as always.
func TestNamesThatAreNoLabelValues(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	longCluster := "long-" + strings.Repeat("c", 248)
	longSet := "set-" + strings.Repeat("s", 70)
	fleet := metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "names"}}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(longSet).Selector(fleet).Obj())
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("names-short").Selector(fleet).Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(longCluster).Label("fleet", "names").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("names-c1").Label("fleet", "names").Obj())
	framework.CreateNamespace(ctx, t, c, "names-only-long")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("names-only-long", longSet).Bound(true).Obj())
	framework.CreateNamespace(ctx, t, c, "names-both")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("names-both", longSet).Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("names-both", "names-short").Bound(true).Obj())

	manager := map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management"}
	with := func(extra ...string) map[string]string {
		labels := map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management"}
		for i := 0; i < len(extra); i += 2 {
			labels[extra[i]] = extra[i+1]
		}
		return labels
	}
	view := func(name string, labels map[string]string) utiltesting.ProfileView {
		return utiltesting.ProfileView{Labels: labels, DisplayName: name, Manager: "open-cluster-management"}
	}
	const standard = 2 // the standard properties: the cluster's id and set
	expectProfile(t, ctx, "names-only-long", "names-c1", view("names-c1", with("open-cluster-management.io/cluster-name", "names-c1")), standard)
	expectProfile(t, ctx, "names-both", "names-c1", view("names-c1", with("open-cluster-management.io/cluster-name", "names-c1",
		"multicluster.x-k8s.io/clusterset", "names-short")), standard)
	expectProfile(t, ctx, "names-only-long", longCluster, view(longCluster, manager), standard)
	expectProfile(t, ctx, "names-both", longCluster, view(longCluster, with("multicluster.x-k8s.io/clusterset", "names-short")), standard)

	// Another reconcile of each cluster reports nothing new.
	for _, name := range []string{longCluster, "names-c1"} {
		framework.UpdateCluster(ctx, t, c, name, func(mc *clusterv1.ManagedCluster) { mc.Labels["touched"] = "yes" })
	}
	expectProfile(t, ctx, "names-both", longCluster, view(longCluster, with("multicluster.x-k8s.io/clusterset", "names-short")), standard)
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(eventNotes(g, ctx, "ManagedCluster", longCluster, "ClusterProfileLabelsOmitted")).To(Equal([]string{
			"Labels left off ClusterProfiles: multicluster.x-k8s.io/clusterset in namespace names-only-long (set \"" + longSet +
				"\" is no valid label value and no other bound set there is); open-cluster-management.io/cluster-name (the cluster name is no valid label value)",
		}))
		g.Expect(eventNotes(g, ctx, "ManagedCluster", "names-c1", "ClusterProfileLabelsOmitted")).To(Equal([]string{
			"Labels left off ClusterProfiles: multicluster.x-k8s.io/clusterset in namespace names-only-long (set \"" + longSet +
				"\" is no valid label value and no other bound set there is)",
		}))
		g.Expect(eventNotes(g, ctx, "ManagedCluster", longCluster, "ClusterProfileWriteFailed")).To(BeEmpty())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// A token copy is named <cluster>-<msa>; when that is no valid Secret name
// the copy is left out and the ManagedServiceAccount told once, and the
// cluster's other tokens are copied as always.
func TestATokenCopyThatCannotBeNamed(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("copyname-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("copyname-c1").ClusterSet("copyname-set").Obj())
	ensureNamespace(ctx, t, "copyname-c1")
	for _, ns := range []string{"copyname-a", "copyname-b"} {
		framework.CreateNamespace(ctx, t, c, ns)
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, "copyname-set").Bound(true).Obj())
	}
	long := strings.Repeat("m", 242) // "copyname-c1-" makes 254 characters
	createMSA(ctx, t, "copyname-c1", long, "token-long")
	createMSA(ctx, t, "copyname-c1", "good", "token-good")

	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(copyNamespaces(g, ctx, "copyname-c1-good")).To(Equal([]string{"copyname-a", "copyname-b"}))
		g.Expect(eventNotes(g, ctx, "ManagedServiceAccount", long, "SyncedSecretNameInvalid")).To(Equal([]string{
			`Not copying the token next to the ClusterProfiles of copyname-c1: "copyname-c1-` + long +
				`" is no valid Secret name: must be no more than 253 characters. Shorten this ManagedServiceAccount's name.`,
		}))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectWorld(t, ctx, "copyname-c1", []string{"copyname-a", "copyname-b"}, "copyname-c1-good")
}

// A client config the direct entry cannot use safely (http://, a relative
// URL, a CA that is not PEM) gets no entry and a False DirectAccess
// condition saying why; fixed, it gets the entry and the condition goes.
func TestTheDirectEntryRefusesUnsafeClientConfigs(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfileDirectAccess": true}})
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("direct-set").Obj())
	framework.CreateNamespace(ctx, t, c, "direct-ns")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("direct-ns", "direct-set").Bound(true).Obj())
	configs := map[string]clusterv1.ClientConfig{
		"direct-http":     {URL: "http://api.example.com:6443"},
		"direct-relative": {URL: "api.example.com:6443"},
		"direct-text-ca":  {URL: "https://api.example.com:6443", CABundle: []byte("not a certificate")},
	}
	for name, config := range configs {
		mc := utiltesting.MakeManagedCluster(name).ClusterSet("direct-set").Obj()
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{config}
		framework.CreateCluster(ctx, t, c, mc)
	}
	refused := func(message string) accessView {
		return accessView{Conditions: map[string]string{"DirectAccess": "False/ClientConfigRefused: " + message}}
	}
	expectAccess(t, ctx, "direct-ns", "direct-http", refused(`The ManagedCluster's first client config URL "http://api.example.com:6443" uses http, not https; no direct entry is published`))
	expectAccess(t, ctx, "direct-ns", "direct-relative", refused(`The ManagedCluster's first client config URL "api.example.com:6443" is not an absolute https:// URL; no direct entry is published`))
	expectAccess(t, ctx, "direct-ns", "direct-text-ca", refused("The ManagedCluster's first client config CA bundle is not PEM-encoded certificates; no direct entry is published"))

	framework.UpdateCluster(ctx, t, c, "direct-http", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs[0].URL = "https://api.example.com:6443"
	})
	expectAccess(t, ctx, "direct-ns", "direct-http", accessView{Conditions: map[string]string{},
		Entries: map[string]string{"open-cluster-management-direct": "https://api.example.com:6443"}})
}

// 1,000 claims of 1 KiB: the profile is written with what fits
// MaxPropertiesBytes, the rest reported once in an Event whose note is cut
// to what the API server accepts. (A claim value of 1 MiB never reaches the
// mirror: the ManagedCluster schema refuses values over 1,024 bytes, which
// the test checks too.)
func TestHugeClaims(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{})
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("claims-set").Obj())
	framework.CreateNamespace(ctx, t, c, "claims-ns")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("claims-ns", "claims-set").Bound(true).Obj())
	many := utiltesting.MakeManagedCluster("claims-many").ClusterSet("claims-set")
	for i := range 1000 {
		many.Claim(fmt.Sprintf("claim-%03d", i), strings.Repeat("v", 1014)) // 1,024 bytes with the name
	}
	framework.CreateCluster(ctx, t, c, many.Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("claims-huge").ClusterSet("claims-set").Obj())
	framework.UpdateClusterStatus(ctx, t, c, "claims-huge", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "small", Value: "yes"}}
	})
	huge := &clusterv1.ManagedCluster{}
	NewWithT(t).Expect(c.Get(ctx, types.NamespacedName{Name: "claims-huge"}, huge)).To(Succeed())
	huge.Status.ClusterClaims = append(huge.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: "huge", Value: strings.Repeat("h", 1<<20)})
	NewWithT(t).Expect(c.Status().Update(ctx, huge)).To(MatchError(ContainSubstring("may not be more than 1024 bytes")))

	view := func(name string) utiltesting.ProfileView {
		return utiltesting.ProfileView{Labels: map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management",
			"open-cluster-management.io/cluster-name": name, "multicluster.x-k8s.io/clusterset": "claims-set"},
			DisplayName: name, Manager: "open-cluster-management"}
	}
	expectProfile(t, ctx, "claims-ns", "claims-huge", view("claims-huge"), 1+2)
	expectProfile(t, ctx, "claims-ns", "claims-many", view("claims-many"), mirror.MaxPropertiesBytes/1024+2)
	NewWithT(t).Eventually(func(g Gomega) {
		notes := eventNotes(g, ctx, "ManagedCluster", "claims-many", "ClusterClaimsSkipped")
		g.Expect(notes).To(HaveLen(1))
		g.Expect(notes[0]).To(HavePrefix(`Claims left out of ClusterProfile properties: "claim-512" (the profile's properties would exceed 524288 bytes), "claim-513"`))
		g.Expect(notes[0]).To(HaveSuffix("…"))
		g.Expect(len(notes[0])).To(BeNumerically("<=", 1024))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// A binding that flaps between Bound and unbound (every second for a
// minute, as the issue puts it) is followed: when it settles, its namespace holds exactly
// what the last state says, and nothing leaked anywhere else. A binding to a
// set that does not exist publishes nothing, even claiming to be Bound.
func TestAFlappingBindingAndABindingToNoSet(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates})
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("flap-set").Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster("flap-c1").ClusterSet("flap-set").Obj())
	ensureNamespace(ctx, t, "flap-c1")
	createMSA(ctx, t, "flap-c1", "kueue", "token-1")
	for _, ns := range []string{"flap-steady", "flap-flapping", "flap-ghost"} {
		framework.CreateNamespace(ctx, t, c, ns)
	}
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("flap-steady", "flap-set").Bound(true).Obj())
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("flap-ghost", "flap-no-such-set").Bound(true).Obj())
	flapping := utiltesting.MakeBinding("flap-flapping", "flap-set").Bound(true).Obj()
	framework.CreateBinding(ctx, t, c, flapping)

	for i := range 60 {
		time.Sleep(time.Second)
		framework.UpdateStatus(ctx, t, c, flapping, func(b *clusterv1beta2.ManagedClusterSetBinding) {
			b.Status = utiltesting.MakeBinding("flap-flapping", "flap-set").Bound(i%2 == 1).Obj().Status
		})
	}
	// The last write left it Bound (i = 59): both namespaces hold the profile and the copy.
	expectWorld(t, ctx, "flap-c1", []string{"flap-flapping", "flap-steady"}, "flap-c1-kueue")

	framework.UpdateStatus(ctx, t, c, flapping, func(b *clusterv1beta2.ManagedClusterSetBinding) {
		b.Status = utiltesting.MakeBinding("flap-flapping", "flap-set").Bound(false).Obj().Status
	})
	expectWorld(t, ctx, "flap-c1", []string{"flap-steady"}, "flap-c1-kueue")
}
