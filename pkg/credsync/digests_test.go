package credsync

import (
	"crypto/sha256"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

// TestDigestCopiesSharesWhatCopiesHaveInCommon: a token's copies in two
// namespaces keep their own names and owners but share their labels,
// annotations and digests; another token's copy shares none of them.
func TestDigestCopiesSharesWhatCopiesHaveInCommon(t *testing.T) {
	transform := secretdigest.Transform()
	digest := func(s *corev1.Secret) *corev1.Secret {
		want := s.DeepCopy()
		want.ManagedFields = nil
		want.Annotations[secretdigest.AnnotationCached] = "sha256"
		for key, value := range want.Data {
			sum := sha256.Sum256(value)
			want.Data[key] = sum[:]
		}
		out, err := transform(s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("cached copy (-want +got):\n%s", diff)
		}
		return out.(*corev1.Secret)
	}
	a, b := digest(apiServerCopy("c1", "team-a", 1)), digest(apiServerCopy("c1", "team-b", 2))
	other := digest(apiServerCopy("c2", "team-a", 3))
	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	for name, part := range map[string]func(*corev1.Secret) any{
		"labels":      func(s *corev1.Secret) any { return s.Labels },
		"annotations": func(s *corev1.Secret) any { return s.Annotations },
		"data":        func(s *corev1.Secret) any { return s.Data },
	} {
		if !same(part(a), part(b)) {
			t.Errorf("a token's copies do not share their %s", name)
		}
		if same(part(a), part(other)) {
			t.Errorf("different tokens' copies share their %s", name)
		}
	}
}
