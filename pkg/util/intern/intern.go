// Package intern lets the objects of an informer cache share equal byte
// slices and strings instead of holding a copy each. A hub's cache holds tens
// of thousands of ClusterProfiles whose access entries carry the same CA
// certificate (cluster-proxy's, on every profile; a cluster's own, on each
// of its profiles), and the same label keys, condition types and reasons.
//
// Cached objects are read-only (a client Get deep-copies them; readers that
// skip the copy must not write), so sharing is invisible to readers.
package intern

import (
	"bytes"
	"crypto/sha256"
	"sync"
	"unique"
	"unsafe"
	"weak"
)

// String returns the canonical copy of s: equal strings share one copy for
// as long as any holds it.
func String(s string) string { return unique.Make(s).Value() }

// Map replaces a map's keys and values with their shared copies.
// Assigning to a key that is there stores the new key string, and is
// allowed while ranging.
func Map(m map[string]string) {
	for k, v := range m {
		m[String(k)] = String(v)
	}
}

// Bytes shares equal byte slices. It holds them weakly: a slice no cached
// object uses any more is collected, and its entry goes at the next prune.
type Bytes struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]entry
	// pruneAt is the table size at which dead entries are next swept.
	pruneAt int
}

// entry is a shared slice: its first byte, held weakly, and its length.
type entry struct {
	first weak.Pointer[byte]
	len   int
}

// minPruneAt keeps a small table from being swept on every insert.
const minPruneAt = 1024

func NewBytes() *Bytes {
	return &Bytes{entries: map[[sha256.Size]byte]entry{}, pruneAt: minPruneAt}
}

// Intern returns a slice equal to b that equal slices interned before or
// after share. The first of them is copied (so the shared slice starts its
// own allocation, which a weak pointer must point at).
func (t *Bytes) Intern(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	key := sha256.Sum256(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[key]; ok && e.len == len(b) {
		// The digest matches; the bytes are compared all the same.
		if p := e.first.Value(); p != nil {
			if shared := unsafe.Slice(p, e.len); bytes.Equal(shared, b) {
				return shared
			}
		}
	}
	shared := bytes.Clone(b)
	t.entries[key] = entry{first: weak.Make(&shared[0]), len: len(shared)}
	t.prune()
	return shared
}

// prune drops the entries of collected slices once the table has doubled.
func (t *Bytes) prune() {
	if len(t.entries) < t.pruneAt {
		return
	}
	for key, e := range t.entries {
		if e.first.Value() == nil {
			delete(t.entries, key)
		}
	}
	t.pruneAt = max(2*len(t.entries), minPruneAt)
}

// Len is how many entries the table holds (live or not yet pruned).
func (t *Bytes) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}
