package secretdigest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSameData: a Secret matches what is wanted only with the same keys and
// values, whether either comes from the cache (digests) or the API server
// (values); a Secret transformed twice stays what it was. An empty value is
// a value.
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
		"a value emptied": {current: secret(map[string]string{"server": "", "config": `{"caData":"LS0t"}`})},
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
			if got := SameData(tc.current, cache(t, want)); got != tc.same {
				t.Errorf("what is wanted from the cache: SameData = %t, want %t", got, tc.same)
			}
			if got := SameData(cached, cache(t, want)); got != tc.same {
				t.Errorf("both from the cache: SameData = %t, want %t", got, tc.same)
			}
			if got := SameData(want, tc.current); got != tc.same {
				t.Errorf("compared the other way: SameData = %t, want %t", got, tc.same)
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

// TestAnEmptyValueStaysEmpty: the cache shows which values are empty, and
// an empty value wanted matches only an empty one.
func TestAnEmptyValueStaysEmpty(t *testing.T) {
	cached := cache(t, secret(map[string]string{"token": "", "ca.crt": "ca"}))
	if got := cached.Data["token"]; len(got) != 0 {
		t.Errorf("the empty token cached as %x, want empty", got)
	}
	if !SameValue(cached, secret(map[string]string{"token": ""}), "token") {
		t.Error("an empty token does not match an empty one")
	}
	if SameValue(cached, secret(map[string]string{"token": "t"}), "token") {
		t.Error("an empty token matches a token")
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
