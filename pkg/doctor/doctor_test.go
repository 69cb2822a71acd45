package doctor

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func pemCA(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// healthyProfile is cluster1 as the mirror and the proxy access provider
// publish it.
func healthyProfile(ca []byte) *cpv1alpha1.ClusterProfile {
	p := utiltesting.MakeClusterProfile("team-a", "cluster1", clusterprofile.DefaultManagerName).Obj()
	p.Labels[clusterprofile.LabelClusterName] = "cluster1"
	p.Status.Version.Kubernetes = "v1.35.4"
	p.Status.Conditions = []metav1.Condition{{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable"}}
	p.Status.AccessProviders = []cpv1alpha1.AccessProvider{{Name: "open-cluster-management", Cluster: clientcmdv1.Cluster{
		Server:                   "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/cluster1",
		CertificateAuthorityData: ca,
		Extensions:               []clientcmdv1.NamedExtension{cpcreds.ExecExtension("cluster1")},
	}}}
	return p
}

func syncedCopy(expiry time.Time) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cluster1-multikueue",
			Labels: map[string]string{cpcreds.LabelSyncedFrom: cpcreds.SyncedFromValue("cluster1", "multikueue")},
			Annotations: map[string]string{
				cpcreds.AnnotationSourceCluster:               "cluster1",
				cpcreds.AnnotationSourceManagedServiceAccount: "multikueue",
				cpcreds.AnnotationTokenExpiration:             expiry.Format(time.RFC3339),
			}},
		Data: map[string][]byte{cpcreds.SecretKeyToken: []byte("token")},
	}
}

var settings = Settings{Namespace: "team-a", Providers: []string{"open-cluster-management"}, ManagedServiceAccount: "multikueue",
	ManagerName: clusterprofile.DefaultManagerName, ExpiryMargin: time.Hour, Now: now}

// passing lists the checks of a row without --connect, all passed but those
// in failed; the published check comes only with a good token copy.
func passing(failed map[string]string) []Check {
	var out []Check
	for _, name := range []string{CheckProfile, CheckEntry, CheckServer, CheckCA, CheckExtension, CheckToken, CheckPublished, CheckAccess} {
		if name == CheckPublished && failed[CheckToken] != "" {
			continue
		}
		out = append(out, Check{Name: name, OK: failed[name] == "", Fix: failed[name]})
	}
	return out
}

// publishedAsIn records on copy, as the syncer does, the servers of
// profile's entries.
func publishedAsIn(copy *corev1.Secret, profile *cpv1alpha1.ClusterProfile) {
	var servers []cpcreds.PublishedServer
	for _, e := range profile.Status.AccessProviders {
		servers = append(servers, cpcreds.ServerOf(e.Cluster))
	}
	metav1.SetMetaDataAnnotation(&copy.ObjectMeta, cpcreds.AnnotationPublishedServers, cpcreds.EncodePublishedServers(servers))
}
