package consumer_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// TestEqualEntriesBuildUnequalConfigs is the upstream behaviour behind
// MultiKueue's reconnects, as a minimal reproducer: two profiles whose
// access entry is the same and which differ only in a property build
// rest.Configs that apimachinery's semantic equality (what Kueue v0.16.1
// compares its old and new config with) calls different, because
// cluster-inventory-api's pkg/access v0.1.3 always sets a Proxy func and
// any non-nil func compares unequal. Without the func the two are equal:
// nothing else differs. When this test fails, upstream has changed and the
// consumer guide's note on reconnects needs another look.
func TestEqualEntriesBuildUnequalConfigs(t *testing.T) {
	profile := func(property string) *cpv1alpha1.ClusterProfile {
		return &cpv1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "cluster1"},
			Status: cpv1alpha1.ClusterProfileStatus{
				AccessProviders: []cpv1alpha1.AccessProvider{{Name: consumer.ProxyProvider, Cluster: clientcmdv1.Cluster{
					Server:                   "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/cluster1",
					CertificateAuthorityData: []byte("ca"),
					Extensions: []clientcmdv1.NamedExtension{{Name: "client.authentication.k8s.io/exec",
						Extension: runtime.RawExtension{Raw: []byte(`{"clusterName":"cluster1"}`)}}},
				}}},
				Properties: []cpv1alpha1.Property{{Name: "nodes.clusterprofile.open-cluster-management.io", Value: property}},
			},
		}
	}
	providers := access.New(consumer.SeedProviders("/plugins/cp-creds"))
	before, err := providers.BuildConfigFromCP(profile("3"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := providers.BuildConfigFromCP(profile("4"))
	if err != nil {
		t.Fatal(err)
	}
	if equality.Semantic.DeepEqual(before, after) {
		t.Fatal("configs built from profiles differing only in a property compare equal: pkg/access no longer sets a Proxy func")
	}
	before.Proxy, after.Proxy = nil, nil
	if !equality.Semantic.DeepEqual(before, after) {
		t.Errorf("configs differ in more than their Proxy func:\n%+v\n%+v", before, after)
	}
}
