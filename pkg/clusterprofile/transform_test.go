package clusterprofile

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// profileIn is cluster's profile in namespace as a writer of every gate
// leaves it (without managedFields: Compact's own test covers those).
func profileIn(namespace, cluster string) *cpv1alpha1.ClusterProfile {
	return &cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster, UID: types.UID("uid-" + namespace + "-" + cluster),
			Labels: map[string]string{LabelClusterName: cluster, "x-k8s.io/cluster-manager": "open-cluster-management"}},
		Status: cpv1alpha1.ClusterProfileStatus{
			Conditions: []metav1.Condition{{Type: "ControlPlaneHealthy", Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
				LastTransitionTime: metav1.Unix(1795000000, 0)}},
			Properties: []cpv1alpha1.Property{{Name: "id.k8s.io", Value: cluster}},
			AccessProviders: []cpv1alpha1.AccessProvider{{Name: "open-cluster-management-direct", Cluster: clientcmdv1.Cluster{
				Server: "https://api." + cluster + ".example.com", CertificateAuthorityData: []byte("CA of " + cluster)}}},
		},
	}
}

// TestCompactSharesWhatProfilesHaveInCommon: a cluster's profiles in two
// namespaces share their labels, lists and entries; another cluster's
// profile shares none of them; and no reader sees a difference.
func TestCompactSharesWhatProfilesHaveInCommon(t *testing.T) {
	shared := NewShared()
	a, b, other := profileIn("team-a", "c1"), profileIn("team-b", "c1"), profileIn("team-a", "c2")
	for _, p := range []*cpv1alpha1.ClusterProfile{a, b, other} {
		want := p.DeepCopy()
		Compact(p, shared)
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("Compact changed %s/%s (-before +after):\n%s", p.Namespace, p.Name, diff)
		}
	}
	parts := map[string]func(*cpv1alpha1.ClusterProfile) any{
		"labels":          func(p *cpv1alpha1.ClusterProfile) any { return p.Labels },
		"conditions":      func(p *cpv1alpha1.ClusterProfile) any { return p.Status.Conditions },
		"properties":      func(p *cpv1alpha1.ClusterProfile) any { return p.Status.Properties },
		"accessProviders": func(p *cpv1alpha1.ClusterProfile) any { return p.Status.AccessProviders },
	}
	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	for name, part := range parts {
		if !same(part(a), part(b)) {
			t.Errorf("the cluster's profiles do not share their %s", name)
		}
	}
	for name, part := range map[string]func(*cpv1alpha1.ClusterProfile) any{"labels": parts["labels"], "properties": parts["properties"], "accessProviders": parts["accessProviders"]} {
		if same(part(a), part(other)) {
			t.Errorf("different clusters' profiles share their %s", name)
		}
	}
}
