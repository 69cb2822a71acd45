package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

const (
	// proxyNamespace is where cluster-proxy runs, as its addon installs it.
	proxyNamespace = "open-cluster-management-addon"
	// tokenBytes and caBytes are about the size of a real service account
	// token (a JWT) and a PEM certificate, so memory and etcd see real sizes.
	tokenBytes = 900
	caBytes    = 800
	// labelClusterName marks a cluster's namespace on the hub, as the
	// registration controller labels it.
	labelClusterName = "open-cluster-management.io/cluster-name"
)

// bundleWorld is what the capabilities beyond the mirror read: each
// cluster's namespace with K ManagedServiceAccounts asking for sync and
// their token Secrets (credsync), cluster-proxy's configuration and user
// server certificate (proxy), and each cluster's registered client config
// (direct, set on the ManagedClusters themselves by newCluster).
type bundleWorld struct {
	gates gates
	msas  int
	// tokens[i*msas+k] is the current token of cluster i's k-th
	// ManagedServiceAccount.
	tokens [][]byte
	// proxyCA is the user server certificate now in its Secret.
	proxyCA []byte
	// tokenCA is the managed clusters' CA that every token Secret carries.
	tokenCA []byte
}

func newBundleWorld(g gates, clusters, msas int) bundleWorld {
	b := bundleWorld{gates: g, msas: msas, tokens: make([][]byte, clusters*msas), tokenCA: fakePEM()}
	for i := range b.tokens {
		b.tokens[i] = fakeToken()
	}
	if g["proxy"] {
		b.proxyCA = fakePEM()
	}
	return b
}

func msaName(k int) string { return fmt.Sprintf("bench-msa-%d", k) }

// copyCount is how many token copies the syncer must make.
func (w *world) copyCount() int { return w.profileCount() * w.bundle.msas }

// needsClusterNamespaces tells whether anything the run turns on reads the
// clusters' namespaces on the hub.
func (b bundleWorld) needsClusterNamespaces() bool { return b.gates["credsync"] || b.gates["agent"] }

// createBundle makes what the capabilities beyond the mirror read.
func (w *world) createBundle(ctx context.Context, c client.Client) error {
	if w.bundle.needsClusterNamespaces() {
		if err := w.createClusterNamespaces(ctx, c); err != nil {
			return err
		}
	}
	if w.bundle.msas > 0 {
		err := forEach(ctx, setupWorkers, len(w.bundle.tokens), func(ctx context.Context, i int) error {
			return w.createMSA(ctx, c, i)
		})
		if err != nil {
			return err
		}
	}
	if w.bundle.gates["proxy"] {
		return w.createProxy(ctx, c)
	}
	return nil
}

func (w *world) createClusterNamespaces(ctx context.Context, c client.Client) error {
	return forEach(ctx, setupWorkers, len(w.clusters), func(ctx context.Context, i int) error {
		name := w.clusters[i].Name
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelClusterName: name}}}
		if err := c.Create(ctx, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
		return nil
	})
}

// createMSA writes token i's ManagedServiceAccount and token Secret as the
// managed-serviceaccount agent would.
func (w *world) createMSA(ctx context.Context, c client.Client, i int) error {
	cluster, name := w.clusters[i/w.bundle.msas].Name, msaName(i%w.bundle.msas)
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{credsync.LabelIsManagedServiceAccount: "true"}},
		Data: w.bundle.tokenData(w.bundle.tokens[i]),
	}
	if err := c.Create(ctx, token); err != nil {
		return fmt.Errorf("creating token Secret %s/%s: %w", cluster, name, err)
	}
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels:      map[string]string{credsync.LabelSyncToClusterProfile: "true"},
			Annotations: w.consumerNamespaces()},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 8640 * time.Hour}}},
	}
	return createWithStatus(ctx, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: name, LastRefreshTimestamp: metav1.Now()}
		m.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(8640 * time.Hour)}
	})
}

// consumerNamespaces scopes each ManagedServiceAccount to every bench
// namespace, as a platform team scopes its consumers' tokens: an unscoped
// one would also cost a warning Event per ManagedServiceAccount at every
// start of the manager.
func (w *world) consumerNamespaces() map[string]string {
	return map[string]string{cpcreds.AnnotationConsumerNamespaces: strings.Join(w.namespaces, ",")}
}

// rotateToken writes a new token into token i's Secret, as the agent does
// when it refreshes the token, and remembers it.
func (w *world) rotateToken(ctx context.Context, c client.Client, i int, token []byte) error {
	cluster, name := w.clusters[i/w.bundle.msas].Name, msaName(i%w.bundle.msas)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Data = w.bundle.tokenData(token)
	if err := c.Patch(ctx, secret, patch); err != nil {
		return fmt.Errorf("rotating token Secret %s/%s: %w", cluster, name, err)
	}
	w.bundle.tokens[i] = token
	return nil
}

func (w *world) createProxy(ctx context.Context, c client.Client) error {
	if err := createNamespaces(ctx, c, []string{proxyNamespace}); err != nil {
		return err
	}
	if err := c.Create(ctx, utiltesting.MakeProxyConfiguration(proxyNamespace)); err != nil {
		return fmt.Errorf("creating ManagedProxyConfiguration: %w", err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: proxyNamespace, Name: accessprovider.UserServerSecretName},
		Data:       map[string][]byte{accessprovider.UserServerCAKey: w.bundle.proxyCA, "tls.key": fakeToken()},
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating Secret %s/%s: %w", proxyNamespace, accessprovider.UserServerSecretName, err)
	}
	return nil
}

// rotateProxyCA replaces the user server certificate, as cluster-proxy does
// when it renews it.
func (w *world) rotateProxyCA(ctx context.Context, c client.Client, ca []byte) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: proxyNamespace, Name: accessprovider.UserServerSecretName}}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Data = map[string][]byte{accessprovider.UserServerCAKey: ca}
	if err := c.Patch(ctx, secret, patch); err != nil {
		return fmt.Errorf("rotating the user server certificate: %w", err)
	}
	w.bundle.proxyCA = ca
	return nil
}

// withClientConfig gives a cluster the API server URL and CA its klusterlet
// registers, which the direct access provider publishes.
func withClientConfig(c *clusterv1.ManagedCluster) {
	c.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{
		URL: "https://api." + c.Name + ".example.com:6443", CABundle: fakePEM(),
	}}
}

func (b bundleWorld) tokenData(token []byte) map[string][]byte {
	return map[string][]byte{cpcreds.SecretKeyToken: token, cpcreds.SecretKeyCA: b.tokenCA}
}

// fakeToken is random, token-sized and printable.
func fakeToken() []byte { return []byte(randomBase64(tokenBytes)) }

// fakePEM is certificate-shaped and -sized; no reader parses it.
func fakePEM() []byte {
	return []byte("-----BEGIN CERTIFICATE-----\n" + randomBase64(caBytes) + "\n-----END CERTIFICATE-----\n")
}

func randomBase64(n int) string {
	raw := make([]byte, n*3/4)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	return base64.StdEncoding.EncodeToString(raw)
}

// accessStatus is the status share the access provider writing as identity
// keeps on cluster's profile in namespace.
func (w *world) accessStatus(identity profilewrite.Identity, namespace string, cluster *clusterv1.ManagedCluster) profilewrite.StatusApply {
	apply := profilewrite.StatusApply{NamespacedName: types.NamespacedName{Namespace: namespace, Name: cluster.Name}}
	if identity.AccessProviders[0] == accessprovider.ProxyEntryName {
		world := accessprovider.ProxyWorld{
			Configuration: utiltesting.MakeProxyConfiguration(proxyNamespace),
			Certificate:   &corev1.Secret{Data: map[string][]byte{accessprovider.UserServerCAKey: w.bundle.proxyCA}},
		}
		want := accessprovider.ProxyDesired(world, cluster.Name, nil, time.Now())
		apply.AccessProviders = []cpv1alpha1.AccessProvider{*want.Entry}
		apply.Conditions = []metav1.Condition{*want.Condition}
		return apply
	}
	apply.AccessProviders = []cpv1alpha1.AccessProvider{*accessprovider.DirectEntry(identity.AccessProviders[0], cluster)}
	return apply
}

// tokenCopy is the syncer's copy of cluster i's k-th token next to profile.
func (w *world) tokenCopy(namespace string, profile *cpv1alpha1.ClusterProfile, i, k int) *corev1.Secret {
	cluster := w.clusters[i].Name
	// Scoped like the world's ManagedServiceAccounts, to wherever the floor
	// writes.
	msa := &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msaName(k),
		Annotations: map[string]string{cpcreds.AnnotationConsumerNamespaces: profile.Namespace}}}
	token := &corev1.Secret{Data: w.bundle.tokenData(w.bundle.tokens[i*w.bundle.msas+k])}
	copies := credsync.DesiredCopies(profile, cluster, []credsync.Source{{MSA: msa, Token: token}},
		credsync.Rules{Servers: w.publishedServers(namespace, w.clusters[i])})
	copies[0].Namespace = namespace
	return copies[0]
}

// publishedServers are the servers of the entries the run's access
// providers publish for cluster, which its copies record.
func (w *world) publishedServers(namespace string, cluster *clusterv1.ManagedCluster) []cpcreds.PublishedServer {
	var identities []profilewrite.Identity
	if w.bundle.gates["proxy"] {
		identities = append(identities, accessprovider.ProxyIdentity)
	}
	if w.bundle.gates["direct"] {
		identities = append(identities, accessprovider.DirectIdentity(accessprovider.DefaultDirectEntryName))
	}
	var servers []cpcreds.PublishedServer
	for _, identity := range identities {
		servers = append(servers, cpcreds.ServerOf(w.accessStatus(identity, namespace, cluster).AccessProviders[0].Cluster))
	}
	return servers
}
