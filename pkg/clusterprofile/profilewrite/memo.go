package profilewrite

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memoLimit bounds each memo. A hub's profiles repeat a few dozen field
// sets (one per writer and shape of entry); past the limit the memo starts
// over, so a hub with unusual variety costs parses, never memory.
const memoLimit = 4096

// entryMemo remembers the answer of a pure function of a managedFields
// entry, by the entry's subresource and field set. Across a hub's tens of
// thousands of profiles a writer's entries repeat byte for byte (the same
// fields, condition types and entry names), and parsing a field set was most
// of the garbage the writers and the cache transform made. Answers are
// shared between callers: they must not be modified.
type entryMemo[T any] struct {
	mu sync.Mutex
	// answers by subresource, then by field set (a string conversion in a
	// map index does not allocate).
	answers map[string]map[string]T
	size    int
}

func newEntryMemo[T any]() *entryMemo[T] { return &entryMemo[T]{answers: map[string]map[string]T{}} }

// get returns compute's answer for entry, computing it once. Errors are not
// remembered.
func (m *entryMemo[T]) get(entry metav1.ManagedFieldsEntry, compute func() (T, error)) (T, error) {
	raw := entry.FieldsV1.Raw
	m.mu.Lock()
	answer, ok := m.answers[entry.Subresource][string(raw)]
	m.mu.Unlock()
	if ok {
		return answer, nil
	}
	answer, err := compute()
	if err != nil {
		return answer, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.size >= memoLimit {
		m.answers, m.size = map[string]map[string]T{}, 0
	}
	bySet := m.answers[entry.Subresource]
	if bySet == nil {
		bySet = map[string]T{}
		m.answers[entry.Subresource] = bySet
	}
	bySet[string(raw)] = answer
	m.size++
	return answer, nil
}
