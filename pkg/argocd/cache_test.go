package argocd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// BenchmarkCachedClusterSecret reports the heap one of our cluster Secrets
// takes in the cache of our Secrets (bytes/secret), decoded as the informer
// decodes it (protobuf) and through secretdigest.Transform, beside what it
// takes kept whole with only managedFields dropped (bytes/secret-whole),
// for 3,500 clusters whose CA bundles are 1,500 bytes each.
func BenchmarkCachedClusterSecret(b *testing.B) {
	const clusters = 3500
	var digested, whole float64
	for b.Loop() {
		digested = cachedBytesPerSecret(b, clusters, secretdigest.Transform())
		whole = cachedBytesPerSecret(b, clusters, cache.TransformStripManagedFields())
	}
	b.ReportMetric(digested, "bytes/secret")
	b.ReportMetric(whole, "bytes/secret-whole")
}

// BenchmarkCachedName reports the heap another Secret of Argo CD's
// namespace (a token copy, with its labels and annotations) takes in the
// names cache (bytes/name), beside its whole metadata with only
// managedFields dropped (bytes/name-whole).
func BenchmarkCachedName(b *testing.B) {
	const secrets = 3500
	var named, whole float64
	for b.Loop() {
		named = cachedBytesPerName(b, secrets, nameOnly)
		whole = cachedBytesPerName(b, secrets, cache.TransformStripManagedFields())
	}
	b.ReportMetric(named, "bytes/name")
	b.ReportMetric(whole, "bytes/name-whole")
}

func cachedBytesPerName(b *testing.B, secrets int, transform toolscache.TransformFunc) float64 {
	return utiltesting.HeapBytesPerObject(secrets, func(i int) any {
		s := apiServerSecret(fmt.Sprintf("cluster-%05d", i), i)
		s.Name = fmt.Sprintf("cluster-%05d-argocd", i)
		s.Annotations = map[string]string{"clusterprofile.open-cluster-management.io/source-cluster": s.Name,
			"clusterprofile.open-cluster-management.io/source-managedserviceaccount": "argocd",
			"clusterprofile.open-cluster-management.io/token-expiration":             "2026-12-01T00:00:00Z",
			"clusterprofile.open-cluster-management.io/published-servers":            "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/" + s.Name}
		return utiltesting.Cached(b, &metav1.PartialObjectMetadata{ObjectMeta: s.ObjectMeta}, &metav1.PartialObjectMetadata{}, transform)
	})
}

func cachedBytesPerSecret(b *testing.B, clusters int, transform toolscache.TransformFunc) float64 {
	return utiltesting.HeapBytesPerObject(clusters, func(i int) any {
		return utiltesting.Cached(b, apiServerSecret(fmt.Sprintf("cluster-%05d", i), i), &corev1.Secret{}, transform)
	})
}

// apiServerSecret is a cluster's Secret as the API server returns it: the
// capability's fields, each cluster with its own CA, plus what the server
// adds.
func apiServerSecret(cluster string, i int) *corev1.Secret {
	profile := publishedProfile()
	profile.Name, profile.UID = cluster, types.UID(fmt.Sprintf("11111111-0000-0000-0000-%012d", i))
	entry := proxyEntry()
	entry.Cluster.Server += "/" + cluster
	entry.Cluster.CertificateAuthorityData = []byte(strings.Repeat("c", 1490) + fmt.Sprintf("%010d", i))
	s, err := DesiredSecret(profile, true, entry, testSettings)
	if err != nil {
		panic(err)
	}
	s.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	s.ResourceVersion, s.CreationTimestamp = fmt.Sprint(100000+i), metav1.Unix(1795000000, 0)
	s.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:config":{},"f:name":{},"f:server":{}},"f:metadata":{"f:labels":{}}}`)},
	}}
	return s
}

// TestTheNamesCacheHoldsOthersNamesOnly: the names cache selects every
// Secret but those labelled ours (another cluster manager's count), and
// keeps of each its name and what the informer needs.
func TestTheNamesCacheHoldsOthersNamesOnly(t *testing.T) {
	selector, err := notLabelledOurs(testManager)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		labels   map[string]string
		selected bool
	}{
		"unlabelled":                     {selected: true},
		"another cluster manager's":      {labels: map[string]string{LabelCreatedBy: "another-hub"}, selected: true},
		"ours, or forged with our label": {labels: map[string]string{LabelCreatedBy: testManager}},
	} {
		if got := selector.Matches(labels.Set(tc.labels)); got != tc.selected {
			t.Errorf("%s: selected %t, want %t", name, got, tc.selected)
		}
	}
	copyMeta := &metav1.PartialObjectMetadata{ObjectMeta: apiServerSecret("c1", 1).ObjectMeta}
	copyMeta.Annotations = map[string]string{"some": "annotation"}
	out, err := nameOnly(copyMeta)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-c1",
		UID: "00000000-0000-0000-0000-000000000001", ResourceVersion: "100001"}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("cached metadata (-want +got):\n%s", diff)
	}
}
