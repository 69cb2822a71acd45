package cpcreds

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	k8stesting "k8s.io/client-go/testing"
)

const (
	testToken     = "s3cr3t-token-value"
	testNamespace = "team-a"
	testMSA       = "multikueue"
)

// proxyServer is where the hub's cluster-proxy entry publishes cluster.
func proxyServer(cluster string) string {
	return "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/" + cluster
}

// proxyCA is the CA of the hub's cluster-proxy entry.
var proxyCA = []byte("-----BEGIN CERTIFICATE-----\nproxy\n-----END CERTIFICATE-----\n")

// execInfo is what client-go passes for a cluster whose exec extension holds
// config, reached at cluster1's proxy server with the proxy's CA.
func execInfo(config string) clientauthenticationv1.ExecCredential {
	return execInfoFor(proxyServer("cluster1"), proxyCA, config)
}

func execInfoFor(server string, ca []byte, config string) clientauthenticationv1.ExecCredential {
	return clientauthenticationv1.ExecCredential{Spec: clientauthenticationv1.ExecCredentialSpec{
		Cluster: &clientauthenticationv1.Cluster{
			Server:                   server,
			CertificateAuthorityData: ca,
			Config:                   runtime.RawExtension{Raw: []byte(config)},
		},
	}}
}

var cluster1 = execInfo(`{"clusterName":"cluster1"}`)

// secretBuilder makes Secrets for the tests.
type secretBuilder struct{ secret *corev1.Secret }

// syncedSecret is the copy the syncer writes of msa's token for cluster,
// recording the cluster's proxy server as the one it is published at.
func syncedSecret(namespace, cluster, msa string) *secretBuilder {
	return plantedSecret(namespace, SecretName(cluster, msa)).
		label(SyncedFromValue(cluster, msa)).
		annotation(AnnotationSourceCluster, cluster).
		annotation(AnnotationSourceManagedServiceAccount, msa).
		servers(PublishedServer{Server: proxyServer(cluster), CASHA256: caDigest(proxyCA)})
}

func (b *secretBuilder) servers(servers ...PublishedServer) *secretBuilder {
	return b.annotation(AnnotationPublishedServers, EncodePublishedServers(servers))
}

// plantedSecret is a Secret under a copy's name that the syncer did not write.
func plantedSecret(namespace, name string) *secretBuilder {
	return &secretBuilder{&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string][]byte{SecretKeyToken: []byte(testToken), SecretKeyCA: []byte("ca")},
	}}
}

func (b *secretBuilder) annotation(key, value string) *secretBuilder {
	metav1.SetMetaDataAnnotation(&b.secret.ObjectMeta, key, value)
	return b
}

// named renames the Secret: two pairs whose names join into one Secret name
// (cluster a + MSA b-c, cluster a-b + MSA c) compete for it.
func (b *secretBuilder) named(name string) *secretBuilder {
	b.secret.Name = name
	return b
}

func (b *secretBuilder) withoutAnnotation(key string) *secretBuilder {
	delete(b.secret.Annotations, key)
	return b
}

func (b *secretBuilder) label(value string) *secretBuilder {
	metav1.SetMetaDataLabel(&b.secret.ObjectMeta, LabelSyncedFrom, value)
	return b
}

func (b *secretBuilder) withoutKey(key string) *secretBuilder {
	delete(b.secret.Data, key)
	return b
}

func (b *secretBuilder) obj() *corev1.Secret { return b.secret }

func forbidden(action k8stesting.Action) (bool, runtime.Object, error) {
	get := action.(k8stesting.GetAction)
	return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, get.GetName(),
		errors.New(`User "system:serviceaccount:team-a:kueue" cannot get resource "secrets" in API group "" in the namespace "team-a"`))
}

func TestGetToken(t *testing.T) {
	expiry := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := map[string]struct {
		secrets []*corev1.Secret
		in      clientauthenticationv1.ExecCredential
		reactor k8stesting.ReactionFunc
		want    clientauthenticationv1.ExecCredentialStatus
		// wantErr lists what the one error line must say; empty means success.
		wantErr []string
		// wantGets is the number of Secret GETs: one whenever the input is usable.
		wantGets int
	}{
		"found, with expiry": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).
				annotation(AnnotationTokenExpiration, expiry.Format(time.RFC3339)).obj()},
			in:       cluster1,
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken, ExpirationTimestamp: &metav1.Time{Time: expiry}},
			wantGets: 1,
		},
		"found, expiry with a zone offset": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).
				annotation(AnnotationTokenExpiration, "2030-01-02T05:04:05+02:00").obj()},
			in:       cluster1,
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken, ExpirationTimestamp: &metav1.Time{Time: expiry}},
			wantGets: 1,
		},
		"found, without expiry annotation": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in:       cluster1,
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken},
			wantGets: 1,
		},
		"malformed expiry annotation is ignored": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).
				annotation(AnnotationTokenExpiration, "next tuesday").obj()},
			in:       cluster1,
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken},
			wantGets: 1,
		},
		"the direct server, the second one published": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).servers(
				PublishedServer{Server: proxyServer("cluster1"), CASHA256: caDigest(proxyCA)},
				PublishedServer{Server: "https://cluster1.example.com:6443"}).obj()},
			in:       execInfoFor("https://cluster1.example.com:6443", nil, `{"clusterName":"cluster1"}`),
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken},
			wantGets: 1,
		},
		"the published server with a trailing slash": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in:       execInfoFor(proxyServer("cluster1")+"/", proxyCA, `{"clusterName":"cluster1"}`),
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken},
			wantGets: 1,
		},
		"the published server without a CA from client-go": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in:       execInfoFor(proxyServer("cluster1"), nil, `{"clusterName":"cluster1"}`),
			want:     clientauthenticationv1.ExecCredentialStatus{Token: testToken},
			wantGets: 1,
		},
		"a server nobody published is refused": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in:      execInfoFor("https://trap.example.com:8443", proxyCA, `{"clusterName":"cluster1"}`),
			wantErr: []string{`refusing to send the token of cluster "cluster1" to https://trap.example.com:8443`,
				"the hub publishes that cluster at " + proxyServer("cluster1")},
			wantGets: 1,
		},
		"another cluster's server is refused": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in:       execInfoFor(proxyServer("cluster2"), proxyCA, `{"clusterName":"cluster1"}`),
			wantErr:  []string{"to " + proxyServer("cluster2") + ":", "the hub publishes that cluster at " + proxyServer("cluster1")},
			wantGets: 1,
		},
		"the published server with another CA is refused": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in:       execInfoFor(proxyServer("cluster1"), []byte("the trap's CA"), `{"clusterName":"cluster1"}`),
			wantErr:  []string{"trusts a CA (sha256 " + caDigest([]byte("the trap's CA")) + ")", "(sha256 " + caDigest(proxyCA) + ")"},
			wantGets: 1,
		},
		"a CA where the hub publishes none is refused": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).
				servers(PublishedServer{Server: proxyServer("cluster1")}).obj()},
			in:       cluster1,
			wantErr:  []string{"other than the one the hub publishes for that server (none: the consumer's system roots)"},
			wantGets: 1,
		},
		"skipping TLS verification is refused": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in: func() clientauthenticationv1.ExecCredential {
				in := execInfo(`{"clusterName":"cluster1"}`)
				in.Spec.Cluster.InsecureSkipTLSVerify = true
				return in
			}(),
			wantErr:  []string{"without verifying its certificate", "insecure-skip-tls-verify"},
			wantGets: 1,
		},
		"verifying TLS as another name is refused": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).obj()},
			in: func() clientauthenticationv1.ExecCredential {
				in := execInfo(`{"clusterName":"cluster1"}`)
				in.Spec.Cluster.TLSServerName = "trap.example.com"
				return in
			}(),
			wantErr:  []string{`verified as "trap.example.com"`, "tls-server-name"},
			wantGets: 1,
		},
		"a copy that records no server is refused": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).withoutAnnotation(AnnotationPublishedServers).obj()},
			in:       cluster1,
			wantErr:  []string{"records no server the hub publishes for cluster \"cluster1\"", "clusterProfileAccessProvider"},
			wantGets: 1,
		},
		"a copy that records an empty list is refused": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).servers().obj()},
			in:       cluster1,
			wantErr:  []string{"no access provider of this bundle publishes a server for that cluster"},
			wantGets: 1,
		},
		"a copy whose servers do not parse is refused": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).
				annotation(AnnotationPublishedServers, "https://trap.example.com").obj()},
			in:       cluster1,
			wantErr:  []string{"is no list of servers", "delete the copy"},
			wantGets: 1,
		},
		"a Secret planted under the copy's name is refused": {
			secrets:  []*corev1.Secret{plantedSecret(testNamespace, "cluster1-multikueue").obj()},
			in:       cluster1,
			wantErr:  []string{"secret team-a/cluster1-multikueue is not a synced token copy", "no label authentication.open-cluster-management.io/synced-from"},
			wantGets: 1,
		},
		"a planted Secret with the source annotations but no label is refused": {
			secrets: []*corev1.Secret{plantedSecret(testNamespace, "cluster1-multikueue").
				annotation(AnnotationSourceCluster, "cluster1").annotation(AnnotationSourceManagedServiceAccount, testMSA).obj()},
			in:       cluster1,
			wantErr:  []string{"is not a synced token copy", "no label authentication.open-cluster-management.io/synced-from"},
			wantGets: 1,
		},
		"a copy without the cluster annotation is refused": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).withoutAnnotation(AnnotationSourceCluster).obj()},
			in:       cluster1,
			wantErr:  []string{"not a complete synced token copy", "annotation authentication.open-cluster-management.io/synced-from-cluster is missing"},
			wantGets: 1,
		},
		"a copy without the ManagedServiceAccount annotation is refused": {
			secrets: []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).
				withoutAnnotation(AnnotationSourceManagedServiceAccount).obj()},
			in:       cluster1,
			wantErr:  []string{"not a complete synced token copy", "synced-from-managed-serviceaccount is missing"},
			wantGets: 1,
		},
		"a copy whose label names another pair is refused": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).label("cluster9-multikueue").obj()},
			in:       cluster1,
			wantErr:  []string{`label authentication.open-cluster-management.io/synced-from="cluster9-multikueue"`, `writes "cluster1-multikueue"`},
			wantGets: 1,
		},
		"a colliding name holding another cluster's token is refused": {
			// cluster "cluster1-multi" + MSA "kueue" also gives cluster1-multikueue.
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1-multi", "kueue").named("cluster1-multikueue").obj()},
			in:       cluster1,
			wantErr:  []string{`holds the token of cluster "cluster1-multi" and ManagedServiceAccount "kueue"`, "collide"},
			wantGets: 1,
		},
		"other clusters' and MSAs' secrets are not used": {
			secrets: []*corev1.Secret{
				syncedSecret(testNamespace, "cluster2", testMSA).obj(),
				syncedSecret(testNamespace, "cluster1", "argocd").obj(),
				syncedSecret("elsewhere", "cluster1", testMSA).obj(),
			},
			in:       cluster1,
			wantErr:  []string{"secret team-a/cluster1-multikueue not found"},
			wantGets: 1,
		},
		"secret missing": {
			in: cluster1,
			wantErr: []string{
				"secret team-a/cluster1-multikueue not found",
				`ManagedServiceAccount "multikueue" in hub namespace "cluster1"`,
				`authentication.open-cluster-management.io/sync-to-clusterprofile: "true"`,
				`namespace "team-a" must be bound to a ManagedClusterSet containing cluster "cluster1"`,
			},
			wantGets: 1,
		},
		"token key missing": {
			secrets:  []*corev1.Secret{syncedSecret(testNamespace, "cluster1", testMSA).withoutKey(SecretKeyToken).obj()},
			in:       cluster1,
			wantErr:  []string{`secret team-a/cluster1-multikueue has no "token" key`},
			wantGets: 1,
		},
		"empty token": {
			secrets: []*corev1.Secret{func() *corev1.Secret {
				s := syncedSecret(testNamespace, "cluster1", testMSA).obj()
				s.Data[SecretKeyToken] = nil
				return s
			}()},
			in:       cluster1,
			wantErr:  []string{`has no "token" key`},
			wantGets: 1,
		},
		"forbidden": {
			in:       cluster1,
			reactor:  forbidden,
			wantErr:  []string{`permission to get secrets in namespace "team-a"`, `cannot get resource "secrets"`},
			wantGets: 1,
		},
		"provideClusterInfo not set": {
			in:      clientauthenticationv1.ExecCredential{},
			wantErr: []string{"no spec.cluster", "provideClusterInfo: true"},
		},
		"no cluster config": {
			in:      execInfo(""),
			wantErr: []string{"no spec.cluster.config", "client.authentication.k8s.io/exec"},
		},
		"cluster config is JSON null": {
			in:      execInfo("null"),
			wantErr: []string{"no clusterName"},
		},
		"cluster config is not an object": {
			in:      execInfo(`"cluster1"`),
			wantErr: []string{"spec.cluster.config in KUBERNETES_EXEC_INFO must be a JSON object"},
		},
		"cluster config is not JSON": {
			in:      execInfo(`{clusterName: cluster1`),
			wantErr: []string{"must be a JSON object"},
		},
		"no clusterName": {
			in:      execInfo(`{"name":"cluster1"}`),
			wantErr: []string{"has no clusterName"},
		},
		"clusterName that cannot name a Secret": {
			in:      execInfo(`{"clusterName":"../cluster1"}`),
			wantErr: []string{`clusterName "../cluster1" and --managed-serviceaccount=multikueue do not make a valid Secret name`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset()
			for _, s := range tc.secrets {
				if err := client.Tracker().Add(s); err != nil {
					t.Fatal(err)
				}
			}
			if tc.reactor != nil {
				client.PrependReactor("get", "secrets", tc.reactor)
			}
			p := &Provider{Client: client, ManagedServiceAccount: testMSA, Namespace: testNamespace}

			got, err := p.GetToken(context.Background(), tc.in)

			checkError(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetToken() status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGets, secretGets(client.Actions())); diff != "" {
				t.Errorf("Secret GETs (-want +got):\n%s", diff)
			}
		})
	}
}

// checkError asserts an error is one line containing every wanted fragment,
// and never the token.
func checkError(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	msg := err.Error()
	for _, fragment := range want {
		if !strings.Contains(msg, fragment) {
			t.Errorf("error %q does not say %q", msg, fragment)
		}
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error %q is not one line", msg)
	}
	if strings.Contains(msg, testToken) {
		t.Errorf("error %q leaks the token", msg)
	}
}

func secretGets(actions []k8stesting.Action) int {
	gets := 0
	for _, a := range actions {
		if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" {
			gets++
		}
	}
	return gets
}

func TestGetTokenResolvesNamespaceFromEnvironment(t *testing.T) {
	client := fake.NewClientset(syncedSecret("from-pod", "cluster1", testMSA).obj())
	p := &Provider{Client: client, ManagedServiceAccount: testMSA, Env: Environment{
		ReadFile: func(string) ([]byte, error) { return []byte("from-pod\n"), nil },
	}}

	got, err := p.GetToken(context.Background(), cluster1)

	if err != nil {
		t.Fatalf("GetToken() error: %v", err)
	}
	if diff := cmp.Diff(clientauthenticationv1.ExecCredentialStatus{Token: testToken}, got); diff != "" {
		t.Errorf("GetToken() status (-want +got):\n%s", diff)
	}
}

func TestNotFoundErrorSaysWhereTheNamespaceCameFrom(t *testing.T) {
	p := &Provider{Client: fake.NewClientset(), ManagedServiceAccount: testMSA, Env: Environment{}}

	_, err := p.GetToken(context.Background(), cluster1)

	checkError(t, err, []string{"secret default/cluster1-multikueue not found", "set $NAMESPACE"})
}

func TestErrorsAreOneLine(t *testing.T) {
	multiLine := apierrors.NewInternalError(multiLineError{})
	p := &Provider{Client: fake.NewClientset(), ManagedServiceAccount: testMSA, Namespace: testNamespace}
	p.Client.(*fake.Clientset).PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, multiLine
	})

	_, err := p.GetToken(context.Background(), cluster1)

	checkError(t, err, []string{"reading secret team-a/cluster1-multikueue", "first line second line"})
	if !apierrors.IsInternalError(err) {
		t.Errorf("error %v no longer unwraps to the API error", err)
	}
}

type multiLineError struct{}

func (multiLineError) Error() string { return "first line\nsecond line" }
