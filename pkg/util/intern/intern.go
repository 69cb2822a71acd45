// Package intern lets the objects of an informer cache share equal strings,
// slices and maps instead of holding a copy each. A hub's cache holds tens
// of thousands of ClusterProfiles whose access entries carry the same CA
// certificate (cluster-proxy's, on every profile; a cluster's own, on each
// of its profiles), and the same label keys, condition types and reasons;
// a cluster's profile in each of ten namespaces carries the same labels,
// properties and access entries, and its token copies the same marks.
//
// Cached objects are read-only (a client Get deep-copies them; readers that
// skip the copy must not write), so sharing is invisible to readers.
package intern

import (
	"bytes"
	"hash/maphash"
	"slices"
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

// Slices shares equal slices of T. It holds them weakly: a slice no cached
// object uses any more is collected, and its entry goes at the next prune.
type Slices[T any] struct {
	hash  func(*maphash.Hash, []T)
	equal func(a, b []T) bool

	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64]entry[T]
	// pruneAt is the table size at which dead entries are next swept.
	pruneAt int
}

// entry is a shared slice: its first element, held weakly, and its length.
type entry[T any] struct {
	first weak.Pointer[T]
	len   int
}

// minPruneAt keeps a small table from being swept on every insert.
const minPruneAt = 1024

// NewSlices shares slices that equal calls equal; hash must give equal
// slices equal hashes.
func NewSlices[T any](hash func(*maphash.Hash, []T), equal func(a, b []T) bool) *Slices[T] {
	return &Slices[T]{hash: hash, equal: equal, seed: maphash.MakeSeed(), entries: map[uint64]entry[T]{}, pruneAt: minPruneAt}
}

// NewComparable shares slices of a comparable type whose elements are ==.
func NewComparable[T comparable]() *Slices[T] {
	return NewSlices(func(h *maphash.Hash, s []T) {
		for _, v := range s {
			maphash.WriteComparable(h, v)
		}
	}, slices.Equal[[]T])
}

// Bytes shares equal byte slices.
type Bytes = Slices[byte]

func NewBytes() *Bytes {
	return NewSlices(func(h *maphash.Hash, b []byte) { _, _ = h.Write(b) }, bytes.Equal)
}

// Intern returns a slice equal to s that equal slices interned before or
// after share. The first of them is copied (so the shared slice starts its
// own allocation, which a weak pointer must point at, and holds no spare
// capacity). Shared slices must not be modified.
func (t *Slices[T]) Intern(s []T) []T {
	if len(s) == 0 {
		return s
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	t.hash(&h, s)
	key := h.Sum64()
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[key]; ok && e.len == len(s) {
		// The hash matches; the elements are compared all the same.
		if p := e.first.Value(); p != nil {
			if shared := unsafe.Slice(p, e.len); t.equal(shared, s) {
				return shared
			}
		}
	}
	shared := slices.Clone(s)
	t.entries[key] = entry[T]{first: weak.Make(&shared[0]), len: len(shared)}
	t.prune()
	return shared
}

// prune drops the entries of collected slices once the table has doubled.
func (t *Slices[T]) prune() {
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
func (t *Slices[T]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}
