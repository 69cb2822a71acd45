package testing

import (
	"runtime"
	"testing"
)

// HeapBytesPerObject is the heap that n objects made by object take while
// they are all held, per object: what a cache holding them costs. object
// may fail the benchmark; what it allocates and drops is not counted.
func HeapBytesPerObject(n int, object func(i int) any) float64 {
	held := make([]any, 0, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		held = append(held, object(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// ProtoObject is an API object with its protobuf encoding, as the API
// server sends built-in kinds to informers.
type ProtoObject interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// Cached is in as an informer with transform holds it: encoded, decoded
// into out, transformed. It fails tb on any error.
func Cached(tb testing.TB, in, out ProtoObject, transform func(any) (any, error)) any {
	raw, err := in.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	if err := out.Unmarshal(raw); err != nil {
		tb.Fatal(err)
	}
	obj, err := transform(out)
	if err != nil {
		tb.Fatal(err)
	}
	return obj
}
