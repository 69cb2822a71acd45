package main

import "time"

// namespaceTally counts an observer's objects per namespace and remembers
// when each namespace last held none, which the deletion phase waits for.
// The observer's lock guards it.
type namespaceTally struct {
	count     map[string]int
	emptiedAt map[string]time.Time
}

func newNamespaceTally() namespaceTally {
	return namespaceTally{count: map[string]int{}, emptiedAt: map[string]time.Time{}}
}

// added counts an object new in ns.
func (t namespaceTally) added(ns string) { t.count[ns]++ }

// removed drops an object of ns, at now.
func (t namespaceTally) removed(ns string, now time.Time) {
	if t.count[ns]--; t.count[ns] == 0 {
		t.emptiedAt[ns] = now
	}
}

// in is how many objects ns holds and when it last became empty.
func (t namespaceTally) in(ns string) (int, time.Time) { return t.count[ns], t.emptiedAt[ns] }
