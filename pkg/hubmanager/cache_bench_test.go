package hubmanager

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	sigsjson "sigs.k8s.io/json"
)

// profileAllGates is a profile as the API server returns it on a hub with
// every capability on: the mirror's metadata and status, both access
// entries with their CAs, and the four managedFields entries of its writers.
//
//go:embed testdata/clusterprofile-all-gates.json
var profileAllGates string

// BenchmarkCachedProfile reports the heap one ClusterProfile takes in the
// manager's cache (bytes/profile), decoded as the informer decodes it, before
// and after trimObjects, on a hub of 500 clusters bound into 10 namespaces.
func BenchmarkCachedProfile(b *testing.B) {
	const clusters, namespaces = 500, 10
	for _, trim := range []bool{false, true} {
		b.Run(fmt.Sprintf("trimmed=%v", trim), func(b *testing.B) {
			var perProfile float64
			for b.Loop() {
				perProfile = cachedBytesPerProfile(b, clusters, namespaces, trim)
			}
			b.ReportMetric(perProfile, "bytes/profile")
		})
	}
}

func cachedBytesPerProfile(b *testing.B, clusters, namespaces int, trim bool) float64 {
	transform := trimObjects(clusterprofile.NewShared())
	return utiltesting.HeapBytesPerObject(clusters*namespaces, func(i int) any {
		cluster := fmt.Sprintf("cluster-%05d", i/namespaces)
		raw := strings.NewReplacer(
			"{{CLUSTER}}", cluster, "{{NAMESPACE}}", fmt.Sprintf("team-%02d", i%namespaces),
			"{{UID}}", fmt.Sprintf("00000000-0000-0000-0000-%012d", i),
			// A CA per cluster, the same in each of its namespaces.
			"{{DIRECTCA}}", base64.StdEncoding.EncodeToString([]byte(strings.Repeat(cluster, 70))),
		).Replace(profileAllGates)
		var obj any = &cpv1alpha1.ClusterProfile{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(raw), obj); err != nil {
			b.Fatal(err)
		}
		if !trim {
			return obj
		}
		obj, err := transform(obj)
		if err != nil {
			b.Fatal(err)
		}
		return obj
	})
}
