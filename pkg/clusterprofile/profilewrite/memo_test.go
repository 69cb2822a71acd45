package profilewrite

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEntryMemoComputesOncePerFieldSet(t *testing.T) {
	memo := newEntryMemo[string]()
	calls := 0
	compute := func(answer string) func() (string, error) {
		return func() (string, error) { calls++; return answer, nil }
	}
	entry := func(subresource, raw string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Subresource: subresource, FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}
	}

	first, _ := memo.get(entry("status", `{"f:status":{}}`), compute("a"))
	again, _ := memo.get(entry("status", `{"f:status":{}}`), compute("not asked"))
	otherSubresource, _ := memo.get(entry("", `{"f:status":{}}`), compute("b"))
	if first != "a" || again != "a" || otherSubresource != "b" || calls != 2 {
		t.Errorf("got %q, %q, %q after %d computations; want a, a, b after 2", first, again, otherSubresource, calls)
	}

	if _, err := memo.get(entry("", "bad"), func() (string, error) { return "", errors.New("unreadable") }); err == nil {
		t.Error("an error must be returned")
	}
	if got, err := memo.get(entry("", "bad"), compute("c")); err != nil || got != "c" {
		t.Errorf("an error must not be remembered: got %q, %v", got, err)
	}

	for i := range memoLimit + 1 {
		_, _ = memo.get(entry("", fmt.Sprint(i)), compute("x"))
	}
	if memo.size > memoLimit {
		t.Errorf("memo holds %d answers, more than its limit %d", memo.size, memoLimit)
	}
}
