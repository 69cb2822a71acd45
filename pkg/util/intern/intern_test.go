package intern

import (
	"runtime"
	"testing"
	"unsafe"
)

func TestEqualSlicesShareOneArray(t *testing.T) {
	table := NewBytes()
	a := table.Intern([]byte("CA of cluster 1"))
	b := table.Intern([]byte("CA of cluster 1"))
	other := table.Intern([]byte("CA of cluster 2"))
	if string(a) != "CA of cluster 1" || string(other) != "CA of cluster 2" {
		t.Fatalf("interned values changed: %q, %q", a, other)
	}
	if unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Error("equal slices do not share an array")
	}
	if unsafe.SliceData(a) == unsafe.SliceData(other) {
		t.Error("different slices share an array")
	}
	if got := table.Intern(nil); got != nil {
		t.Errorf("Intern(nil) = %q", got)
	}
}

// TestUnusedSlicesAreCollected: the table does not keep what no object
// holds, and sweeps the entries once it has grown.
func TestUnusedSlicesAreCollected(t *testing.T) {
	table := NewBytes()
	// Certificate-sized: the runtime batches allocations under 16 bytes,
	// which then live as long as their neighbours.
	sized := func(s string) []byte { return append(make([]byte, 1024), s...) }
	kept := table.Intern(sized("kept"))
	for i := range minPruneAt - 2 { // the next insert fills the table
		table.Intern(sized(string(rune(i))))
	}
	runtime.GC()
	table.Intern(sized("one more: the table is full and prunes"))
	if n := table.Len(); n > 2 {
		t.Errorf("table holds %d entries after a prune, want the 2 still in use", n)
	}
	again := table.Intern(sized("kept"))
	if unsafe.SliceData(again) != unsafe.SliceData(kept) {
		t.Error("a slice still in use was dropped")
	}
	runtime.KeepAlive(kept)
}

func TestEqualElementsShareOneArray(t *testing.T) {
	type property struct{ name, value string }
	table := NewComparable[property]()
	a := table.Intern([]property{{"region", "eu"}, {"zone", "a"}})
	b := table.Intern([]property{{"region", "eu"}, {"zone", "a"}})
	other := table.Intern([]property{{"region", "eu"}, {"zone", "b"}})
	if unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Error("equal slices do not share an array")
	}
	if unsafe.SliceData(a) == unsafe.SliceData(other) || other[1].value != "b" {
		t.Errorf("different slices share an array: %v", other)
	}
}
