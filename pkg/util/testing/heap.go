package testing

import "runtime"

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
