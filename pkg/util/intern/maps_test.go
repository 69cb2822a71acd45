package intern

import (
	"reflect"
	"runtime"
	"testing"
	"time"
)

type holder struct {
	labels map[string]string
	_      [64]byte // not a tiny allocation: cleanups run when this one dies
}

func TestEqualMapsShareOne(t *testing.T) {
	table := NewStringMaps()
	a, b, c := &holder{}, &holder{}, &holder{}
	a.labels = Share(table, a, map[string]string{"cluster": "c1", "set": "s"})
	b.labels = Share(table, b, map[string]string{"set": "s", "cluster": "c1"})
	c.labels = Share(table, c, map[string]string{"cluster": "c2", "set": "s"})
	if reflect.ValueOf(a.labels).UnsafePointer() != reflect.ValueOf(b.labels).UnsafePointer() {
		t.Error("equal maps are not shared")
	}
	if reflect.ValueOf(a.labels).UnsafePointer() == reflect.ValueOf(c.labels).UnsafePointer() || c.labels["cluster"] != "c2" {
		t.Errorf("different maps are shared: %v", c.labels)
	}
	if got := Share(table, a, map[string]string(nil)); got != nil {
		t.Errorf("Share(nil) = %v", got)
	}
	runtime.KeepAlive([]*holder{a, b, c})
}

// TestMapsNoObjectHoldsAreDropped: the table lets go of a map once every
// object it was handed to is collected, and not before.
func TestMapsNoObjectHoldsAreDropped(t *testing.T) {
	table := NewStringMaps()
	kept := &holder{}
	kept.labels = Share(table, kept, map[string]string{"kept": "yes"})
	for range 100 {
		h := &holder{}
		h.labels = Share(table, h, map[string]string{"dropped": "yes"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for table.Len() != 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	if n := table.Len(); n != 1 {
		t.Fatalf("table holds %d maps, want only the one still held", n)
	}
	again := &holder{}
	again.labels = Share(table, again, map[string]string{"kept": "yes"})
	if reflect.ValueOf(again.labels).UnsafePointer() != reflect.ValueOf(kept.labels).UnsafePointer() {
		t.Error("a map still held was dropped")
	}
	runtime.KeepAlive([]*holder{kept, again})
}
