package reliability_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// bundleGates turns on the mirror, the direct entry and the token syncer:
// the writers whose convergence the fault tests interrupt.
const bundleGates = "--feature-gates=ClusterProfile=true,ClusterProfileDirectAccess=true,ClusterProfileCredSyncer=true"

// testFleet is a world the fault tests converge: clusters of one set, each
// with a client config and a synced token, bound into namespaces.
type testFleet struct {
	prefix     string
	clusters   []string
	namespaces []string
	// tokenPrefix starts each cluster's token ("token-of-" until rotated).
	tokenPrefix string
}

// createFleet publishes n clusters named <prefix>-cNN into namespaces
// <prefix>-a and <prefix>-b.
func createFleet(ctx context.Context, t *testing.T, prefix string, n int) testFleet {
	t.Helper()
	c := env.Client
	f := testFleet{prefix: prefix, namespaces: []string{prefix + "-a", prefix + "-b"}, tokenPrefix: "token-of-"}
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(prefix+"-set").Obj())
	for i := range n {
		name := fmt.Sprintf("%s-c%02d", prefix, i)
		f.clusters = append(f.clusters, name)
		mc := utiltesting.MakeManagedCluster(name).ClusterSet(prefix + "-set").Obj()
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

// worldView is everything the bundle publishes for a fleet: each profile
// (namespace/name) as a consumer reads it, and each token copy with its token.
type worldView struct {
	Profiles map[string]string
	Copies   map[string]string
}

// want is the exact world the fleet should converge to.
func (f testFleet) want() worldView {
	w := worldView{Profiles: map[string]string{}, Copies: map[string]string{}}
	for _, ns := range f.namespaces {
		for _, name := range f.clusters {
			w.Profiles[ns+"/"+name] = fmt.Sprintf("labels=%s/%s/%s manager=open-cluster-management direct=https://api.%s.example.com ca=%t",
				name, f.prefix+"-set", "open-cluster-management", name, true)
			w.Copies[ns+"/"+name+"-kueue"] = f.tokenPrefix + name
		}
	}
	return w
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

func describeProfile(p *cpv1alpha1.ClusterProfile) string {
	direct := make([]string, 0, 1)
	ca := true
	for _, ap := range p.Status.AccessProviders {
		direct = append(direct, ap.Cluster.Server)
		ca = ca && string(ap.Cluster.CertificateAuthorityData) == string(utiltesting.FakeCA(p.Name))
	}
	sort.Strings(direct)
	return fmt.Sprintf("labels=%s/%s/%s manager=%s direct=%s ca=%t",
		p.Labels["open-cluster-management.io/cluster-name"], p.Labels["multicluster.x-k8s.io/clusterset"],
		p.Labels["x-k8s.io/cluster-manager"], p.Spec.ClusterManager.Name, strings.Join(direct, ","), ca)
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
