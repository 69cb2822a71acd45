package intern

import (
	"bytes"
	"hash/maphash"
	"maps"
	"runtime"
	"sync"
)

// Maps shares equal maps between the objects that hold them. A map cannot
// be held weakly as a slice can, so its holders are counted instead: Share
// counts the object it hands the map to, the runtime's cleanup of that
// object uncounts it, and the table lets go of a map no object holds.
type Maps[V any] struct {
	writeValue func(*maphash.Hash, V)
	equalValue func(a, b V) bool

	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64]*sharedMap[V]
}

// sharedMap is a map handed to holders objects, under its hash.
type sharedMap[V any] struct {
	hash    uint64
	m       map[string]V
	holders int
}

// NewMaps shares maps whose keys are equal and whose values equalValue
// finds equal; writeValue must give equal values equal hashes.
func NewMaps[V any](writeValue func(*maphash.Hash, V), equalValue func(a, b V) bool) *Maps[V] {
	return &Maps[V]{writeValue: writeValue, equalValue: equalValue, seed: maphash.MakeSeed(), entries: map[uint64]*sharedMap[V]{}}
}

// NewStringMaps shares labels and annotations.
func NewStringMaps() *Maps[string] {
	return NewMaps(func(h *maphash.Hash, v string) { _, _ = h.WriteString(v) }, func(a, b string) bool { return a == b })
}

// NewBytesMaps shares data maps (such as a Secret's) whose values are equal.
func NewBytesMaps() *Maps[[]byte] {
	return NewMaps(func(h *maphash.Hash, v []byte) { _, _ = h.Write(v) }, bytes.Equal)
}

// Share returns a map equal to m for holder to keep in place of m: the
// first of equal maps is kept as it is, the others share it. holder must be
// the object the map is stored in, and neither it nor any later holder may
// modify the map.
func Share[H, V any](t *Maps[V], holder *H, m map[string]V) map[string]V {
	if len(m) == 0 {
		return m
	}
	hash := t.hashOf(m)
	t.mu.Lock()
	shared := t.entries[hash]
	if shared == nil || !maps.EqualFunc(shared.m, m, t.equalValue) {
		// A map with a colliding hash keeps its holders; it is only no
		// longer handed out.
		shared = &sharedMap[V]{hash: hash, m: m}
		t.entries[hash] = shared
	}
	shared.holders++
	t.mu.Unlock()
	runtime.AddCleanup(holder, t.release, shared)
	return shared.m
}

// release uncounts a holder that has been collected.
func (t *Maps[V]) release(shared *sharedMap[V]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	shared.holders--
	if shared.holders == 0 && t.entries[shared.hash] == shared {
		delete(t.entries, shared.hash)
	}
}

// hashOf hashes m independently of its iteration order.
func (t *Maps[V]) hashOf(m map[string]V) uint64 {
	var sum uint64
	var h maphash.Hash
	h.SetSeed(t.seed)
	for k, v := range m {
		h.Reset()
		_, _ = h.WriteString(k)
		h.WriteByte(0)
		t.writeValue(&h, v)
		sum += h.Sum64()
	}
	return sum + uint64(len(m))
}

// Len is how many maps the table holds.
func (t *Maps[V]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}
