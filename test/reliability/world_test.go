package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// bundleGates turns on the mirror, both access entries (cluster-proxy and
// direct) and the token syncer: the writers whose convergence the fault
// tests interrupt.
const bundleGates = "--feature-gates=ClusterProfile=true,ClusterProfileAccessProvider=true," +
	"ClusterProfileDirectAccess=true,ClusterProfileCredSyncer=true"

// The cluster-proxy installation every fleet's proxy entries point at: its
// ManagedProxyConfiguration names this namespace, where the user server's
// certificate Secret holds proxyCA.
const proxyNamespace = "reliability-cluster-proxy"

var proxyCA = utiltesting.FakeCA("cluster-proxy user server")

// testFleet is a world the fault tests converge: clusters of one set, each
// with a client config, a claim, conditions and a synced token, bound into
// namespaces, reachable through cluster-proxy.
type testFleet struct {
	prefix     string
	clusters   []string
	namespaces []string
	// tokenPrefix starts each cluster's token ("token-of-" until rotated).
	tokenPrefix string
	// foreign holds the profiles (namespace/name) on which another writer
	// put an entry and a property of its own (addForeignEntries).
	foreign map[string]bool
}

// fleetRuns counts the fleets made with each prefix in this process: a
// test run again (-count) gets fresh names, as namespaces outlive a test on
// a control plane without a namespace controller.
var fleetRuns = map[string]int{}

// createFleet publishes n clusters named <prefix>-cNN into namespaces
// <prefix>-a and <prefix>-b (<prefix><run> from a test's second run on).
func createFleet(ctx context.Context, t *testing.T, prefix string, n int) testFleet {
	t.Helper()
	c := env.Client
	if fleetRuns[prefix]++; fleetRuns[prefix] > 1 {
		prefix = fmt.Sprintf("%s%d", prefix, fleetRuns[prefix])
	}
	ensureClusterProxy(ctx, t)
	f := testFleet{prefix: prefix, namespaces: []string{prefix + "-a", prefix + "-b"}, tokenPrefix: "token-of-", foreign: map[string]bool{}}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(prefix+"-set").Obj())
	for i := range n {
		name := fmt.Sprintf("%s-c%02d", prefix, i)
		f.clusters = append(f.clusters, name)
		mc := utiltesting.MakeManagedCluster(name).ClusterSet(prefix+"-set").Version("v1.31.0").Claim("region", "eu").
			Available(metav1.ConditionTrue).Joined().Obj()
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api." + name + ".example.com", CABundle: utiltesting.FakeCA(name)}}
		framework.CreateCluster(ctx, t, c, mc)
		framework.CreateNamespace(ctx, t, c, name)
		createMSA(ctx, t, name, "kueue", "token-of-"+name)
	}
	for _, ns := range f.namespaces {
		framework.CreateNamespace(ctx, t, c, ns)
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, prefix+"-set").Bound(true).Obj())
	}
	return f
}

// ensureClusterProxy installs what the cluster-proxy addon would, once for
// the suite: its configuration and the user server's certificate.
func ensureClusterProxy(ctx context.Context, t *testing.T) {
	t.Helper()
	ensureNamespace(ctx, t, proxyNamespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: proxyNamespace, Name: accessprovider.UserServerSecretName},
		Data:       map[string][]byte{accessprovider.UserServerCAKey: proxyCA, "tls.key": []byte("key")},
	}
	for _, obj := range []client.Object{utiltesting.MakeProxyConfiguration(proxyNamespace), secret} {
		if err := env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("installing cluster-proxy's %T: %v", obj, err)
		}
	}
}

// worldView is everything the bundle publishes for a fleet: each profile
// (namespace/name) as a consumer reads it, and each token copy with its token.
type worldView struct {
	Profiles map[string]string
	Copies   map[string]string
}

// Another writer's share of a profile (addForeignEntries).
const (
	foreignWriter   = "platform-gateway"
	foreignEntry    = "platform-gateway"
	foreignProperty = "gateway.platform.example/zone"
)

// want is the exact world the fleet should converge to.
func (f testFleet) want() worldView {
	w := worldView{Profiles: map[string]string{}, Copies: map[string]string{}}
	for _, ns := range f.namespaces {
		for _, name := range f.clusters {
			w.Profiles[ns+"/"+name] = f.wantProfile(ns, name)
			w.Copies[ns+"/"+name+"-kueue"] = f.tokenPrefix + name
		}
	}
	return w
}

// wantProfile is describeProfile of the complete profile of cluster name in
// ns: the mirror's metadata and status, the cluster-proxy entry, the direct
// entry and, where another writer wrote, its entry and property.
func (f testFleet) wantProfile(ns, name string) string {
	properties := append(standardProperties(name, f.prefix+"-set"), "region=eu")
	entries := []string{
		fmt.Sprintf("%s=https://%s.%s:%d/%s[ca=proxy exec=%s]", accessprovider.ProxyEntryName,
			accessprovider.UserServerServiceName, proxyNamespace, accessprovider.DefaultUserServerPort, name, name),
		fmt.Sprintf("%s=https://api.%s.example.com[ca=cluster exec=%s]", accessprovider.DefaultDirectEntryName, name, name),
	}
	if f.foreign[ns+"/"+name] {
		properties = append(properties, foreignProperty+"=b")
		entries = append(entries, foreignEntry+"=https://gateway.platform.example/"+name+"[ca=none exec=none]")
	}
	sort.Strings(properties)
	sort.Strings(entries)
	return fmt.Sprintf("labels=%s/%s/%s manager=open-cluster-management version=v1.31.0 properties=%s "+
		"conditions=ClusterProxyAccess=True,ControlPlaneHealthy=True,Joined=True entries=%s",
		name, f.prefix+"-set", "open-cluster-management", strings.Join(properties, ","), strings.Join(entries, ","))
}

// observe reads what is published in the fleet's namespaces.
func (f testFleet) observe(ctx context.Context) (worldView, error) {
	w := worldView{Profiles: map[string]string{}, Copies: map[string]string{}}
	for _, ns := range f.namespaces {
		profiles := &cpv1alpha1.ClusterProfileList{}
		if err := env.Client.List(ctx, profiles, clientInNamespace(ns)); err != nil {
			return w, err
		}
		for i := range profiles.Items {
			p := &profiles.Items[i]
			w.Profiles[ns+"/"+p.Name] = describeProfile(p)
		}
		secrets := &corev1.SecretList{}
		if err := env.Client.List(ctx, secrets, clientInNamespace(ns)); err != nil {
			return w, err
		}
		for _, s := range secrets.Items {
			w.Copies[ns+"/"+s.Name] = string(s.Data["token"])
		}
	}
	return w, nil
}

// describeProfile is one line holding all a consumer reads of a profile:
// labels, manager, version, properties, conditions (type=status) and every
// entry, sorted by name (a duplicate would show twice), with its server, which CA it
// carries and the cluster its exec extension names.
func describeProfile(p *cpv1alpha1.ClusterProfile) string {
	var properties, conditions, entries []string
	for _, prop := range p.Status.Properties {
		properties = append(properties, prop.Name+"="+prop.Value)
	}
	for _, c := range p.Status.Conditions {
		conditions = append(conditions, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	for _, ap := range p.Status.AccessProviders {
		entries = append(entries, fmt.Sprintf("%s=%s[ca=%s exec=%s]", ap.Name, ap.Cluster.Server,
			caOf(p.Name, ap.Cluster.CertificateAuthorityData), execClusterOf(ap.Cluster.Extensions)))
	}
	sort.Strings(properties)
	sort.Strings(conditions)
	sort.Strings(entries)
	return fmt.Sprintf("labels=%s/%s/%s manager=%s version=%s properties=%s conditions=%s entries=%s",
		p.Labels["open-cluster-management.io/cluster-name"], p.Labels["multicluster.x-k8s.io/clusterset"],
		p.Labels["x-k8s.io/cluster-manager"], p.Spec.ClusterManager.Name, p.Status.Version.Kubernetes,
		strings.Join(properties, ","), strings.Join(conditions, ","), strings.Join(entries, ","))
}

// caOf names the CA an entry carries: cluster-proxy's, the cluster's own,
// none, or "other".
func caOf(cluster string, ca []byte) string {
	switch {
	case len(ca) == 0:
		return "none"
	case bytes.Equal(ca, proxyCA):
		return "proxy"
	case bytes.Equal(ca, utiltesting.FakeCA(cluster)):
		return "cluster"
	}
	return "other"
}

// execClusterOf is the cluster an entry's cp-creds exec extension names,
// "none" without one.
func execClusterOf(extensions []clientcmdv1.NamedExtension) string {
	var names []string
	for _, e := range extensions {
		config := cpcreds.ExecClusterConfig{}
		if e.Name != cpcreds.ExecExtensionName || json.Unmarshal(e.Extension.Raw, &config) != nil {
			names = append(names, "unreadable:"+e.Name)
			continue
		}
		names = append(names, config.ClusterName)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "+")
}

// expectExactWorld waits until the fleet's namespaces hold exactly what
// want says: every profile complete, every copy with its token, nothing else.
func (f testFleet) expectExactWorld(t *testing.T, ctx context.Context) {
	t.Helper()
	want := f.want()
	NewWithT(t).Eventually(func(g Gomega) {
		got, err := f.observe(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cmp.Diff(want, got)).To(BeEmpty(), "world (-want +got)")
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
}

// published counts the profiles in the fleet's namespaces.
func (f testFleet) published(ctx context.Context) int {
	got, err := f.observe(ctx)
	if err != nil {
		return 0
	}
	return len(got.Profiles)
}

func clientInNamespace(ns string) client.InNamespace { return client.InNamespace(ns) }

// rotateTokens gives every cluster a new token, as the
// managed-serviceaccount agent does when it rotates one.
func (f *testFleet) rotateTokens(ctx context.Context, t *testing.T, prefix string) {
	t.Helper()
	f.tokenPrefix = prefix
	for _, name := range f.clusters {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "kueue"}}
		framework.Update(ctx, t, env.Client, secret, func(s *corev1.Secret) { s.Data["token"] = []byte(prefix + name) })
	}
}

// rotated counts the copies that hold the current token.
func (f testFleet) rotated(ctx context.Context) int {
	got, err := f.observe(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, token := range got.Copies {
		if strings.HasPrefix(token, f.tokenPrefix) {
			n++
		}
	}
	return n
}

// addForeignEntries has another writer (its own field manager, Server-Side
// Apply) put an access entry and a property on every profile of the fleet
// published so far, and returns how many; the exact world then keeps them.
func (f testFleet) addForeignEntries(ctx context.Context, t *testing.T) int {
	t.Helper()
	got, err := f.observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for key := range got.Profiles {
		ns, name, _ := strings.Cut(key, "/")
		body := fmt.Sprintf(`{"apiVersion":%q,"kind":"ClusterProfile","metadata":{"namespace":%q,"name":%q},`+
			`"status":{"accessProviders":[{"name":%q,"cluster":{"server":"https://gateway.platform.example/%s"}}],`+
			`"properties":[{"name":%q,"value":"b"}]}}`, cpv1alpha1.GroupVersion.String(), ns, name, foreignEntry, name, foreignProperty)
		p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := env.Client.Status().Patch(ctx, p, client.RawPatch(types.ApplyPatchType, []byte(body)),
			client.FieldOwner(foreignWriter), client.ForceOwnership); err != nil {
			t.Fatalf("writing %s's share of %s: %v", foreignWriter, key, err)
		}
		f.foreign[key] = true
	}
	return len(got.Profiles)
}
