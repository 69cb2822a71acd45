package secretdigest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSameData: a Secret matches what is wanted only with the same keys and
// values, whether it comes from the cache (digests) or the API server
// (values); a Secret transformed twice stays what it was.
func TestSameData(t *testing.T) {
	want := secret(map[string]string{"server": "https://a", "config": `{"caData":"LS0t"}`})
	cases := map[string]struct {
		current *corev1.Secret
		same    bool
	}{
		"the same values": {current: secret(map[string]string{"server": "https://a", "config": `{"caData":"LS0t"}`}), same: true},
		"a value changed": {current: secret(map[string]string{"server": "https://b", "config": `{"caData":"LS0t"}`})},
		"a key missing":   {current: secret(map[string]string{"server": "https://a"})},
		"a key more":      {current: secret(map[string]string{"server": "https://a", "config": `{"caData":"LS0t"}`, "project": "p"})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SameData(tc.current, want); got != tc.same {
				t.Errorf("from the API server: SameData = %t, want %t", got, tc.same)
			}
			cached := cache(t, tc.current)
			if got := SameData(cached, want); got != tc.same {
				t.Errorf("from the cache: SameData = %t, want %t", got, tc.same)
			}
			if got := SameData(cache(t, cached), want); got != tc.same {
				t.Errorf("transformed twice: SameData = %t, want %t", got, tc.same)
			}
		})
	}
}

// TestTheCacheHoldsNoValue: every value is a 32-byte digest, none in the
// clear, and the cached Secret carries the mark.
func TestTheCacheHoldsNoValue(t *testing.T) {
	in := secret(map[string]string{"token": "a-long-token", "ca.crt": "-----BEGIN CERTIFICATE-----"})
	out := cache(t, in.DeepCopy())
	for key, value := range out.Data {
		if len(value) != 32 || string(value) == string(in.Data[key]) {
			t.Errorf("the cache holds %q in the clear", key)
		}
	}
	if out.Annotations[AnnotationCached] != "sha256" || out.ManagedFields != nil {
		t.Errorf("cached Secret: annotations %v, managedFields %v; want the mark and no managedFields", out.Annotations, out.ManagedFields)
	}
}

func secret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-c1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "someone"}}}, Data: map[string][]byte{}}
	for key, value := range data {
		s.Data[key] = []byte(value)
	}
	return s
}

func cache(t *testing.T, s *corev1.Secret) *corev1.Secret {
	t.Helper()
	out, err := Transform()(s.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Secret)
}
