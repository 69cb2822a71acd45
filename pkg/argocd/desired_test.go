package argocd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

const testManager = "open-cluster-management"

var testSettings = Settings{ManagerName: testManager}.WithDefaults()

// publishedProfile is cluster c1's profile in Argo CD's namespace, as the
// mirror publishes it.
func publishedProfile() *cpv1alpha1.ClusterProfile {
	p := utiltesting.MakeClusterProfile("argocd", "c1", testManager).Obj()
	p.UID = types.UID("uid-c1")
	p.Labels["open-cluster-management.io/cluster-name"] = "c1"
	p.Labels["multicluster.x-k8s.io/clusterset"] = "prod"
	p.Status.Properties = []cpv1alpha1.Property{{Name: "cluster.clusterset.k8s.io", Value: "c1"},
		{Name: "clusterset.k8s.io", Value: "prod"}, {Name: "region", Value: "eu"}}
	return p
}

// proxyEntry is the cluster-proxy entry the hub publishes for c1.
func proxyEntry() *cpv1alpha1.AccessProvider {
	return &cpv1alpha1.AccessProvider{Name: "open-cluster-management", Cluster: clientcmdv1.Cluster{
		Server:                   "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/c1",
		CertificateAuthorityData: []byte("proxy CA"),
		Extensions:               []clientcmdv1.NamedExtension{cpcreds.ExecExtension("c1")},
	}}
}

// wantSecret is the cluster Secret of c1 with these settings.
func wantSecret(project string) *corev1.Secret {
	data := map[string][]byte{
		"name":   []byte("c1"),
		"server": []byte("https://cluster-proxy-addon-user.open-cluster-management-addon:9092/c1"),
		"config": []byte(`{"execProviderConfig":{"command":"/plugins/cp-creds","args":["--managed-serviceaccount=argocd"],` +
			`"apiVersion":"client.authentication.k8s.io/v1","provideClusterInfo":true,"config":{"clusterName":"c1"}},` +
			`"tlsClientConfig":{"insecure":false,"caData":"cHJveHkgQ0E="}}`),
	}
	if project != "" {
		data["project"] = []byte(project)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-c1",
			Labels: map[string]string{"x-k8s.io/cluster-manager": testManager, "open-cluster-management.io/cluster-name": "c1",
				"multicluster.x-k8s.io/clusterset": "prod", "cluster.clusterset.k8s.io": "c1", "clusterset.k8s.io": "prod",
				"argocd.argoproj.io/secret-type": "cluster", "clusterprofile.open-cluster-management.io/argocd": testManager},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ClusterProfile",
				Name: "c1", UID: "uid-c1", BlockOwnerDeletion: ptr.To(false)}}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

func TestDesiredSecret(t *testing.T) {
	withProject := testSettings
	withProject.Project = "fleet"
	longID := publishedProfile()
	longID.Status.Properties[0].Value = "an id that is no valid label value because it has spaces"
	wantLongID := wantSecret("")
	delete(wantLongID.Labels, "cluster.clusterset.k8s.io")
	cases := map[string]struct {
		profile  *cpv1alpha1.ClusterProfile
		served   bool
		entry    *cpv1alpha1.AccessProvider
		settings Settings
		want     *corev1.Secret
	}{
		"a published profile: cp-creds through the published entry, labels to select by": {
			profile: publishedProfile(), served: true, entry: proxyEntry(), settings: testSettings, want: wantSecret(""),
		},
		"scoped to a project": {
			profile: publishedProfile(), served: true, entry: proxyEntry(), settings: withProject, want: wantSecret("fleet"),
		},
		"a property that is no label value is no label": {
			profile: longID, served: true, entry: proxyEntry(), settings: testSettings, want: wantLongID,
		},
		"a profile the hub does not publish: none": {profile: publishedProfile(), entry: proxyEntry(), settings: testSettings},
		"no entry published (provider off): none":  {profile: publishedProfile(), served: true, settings: testSettings},
		"no profile: none":                         {served: true, entry: proxyEntry(), settings: testSettings},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DesiredSecret(tc.profile, tc.served, tc.entry, tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Secret (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTheSecretHoldsNoCredential: whatever the entry carries, the config
// holds the CA and cp-creds, never a token, a password or a client key.
func TestTheSecretHoldsNoCredential(t *testing.T) {
	got, err := DesiredSecret(publishedProfile(), true, proxyEntry(), testSettings)
	if err != nil {
		t.Fatal(err)
	}
	for _, forbidden := range []string{"bearerToken", "password", "keyData", "certData", "username"} {
		if strings.Contains(string(got.Data["config"]), `"`+forbidden+`"`) {
			t.Errorf("the config holds %q: %s", forbidden, got.Data["config"])
		}
	}
}
