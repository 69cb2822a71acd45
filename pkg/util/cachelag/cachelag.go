// Package cachelag remembers the objects a reconciler created until its
// cache shows them. Another event on the same key can run a reconcile in
// between (a profile's status written just after), and from its cache the
// object is still missing: creating it again sends a write the API server
// answers with a no-op or a conflict.
package cachelag

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Patience is how long a reconcile trusts its own create over a cache that
// does not show it yet: well over the time a watch event takes to arrive,
// which in a cold start of tens of thousands of objects on a busy machine
// can be several seconds, and short enough that an object deleted before
// the cache saw it is soon made again.
const Patience = 30 * time.Second

// Creations are the keys a reconciler created that its cache has not shown.
type Creations struct {
	mu    sync.Mutex
	at    map[string]time.Time
	clock clock.PassiveClock
}

// New returns an empty record, timed by c.
func New(c clock.PassiveClock) *Creations {
	return &Creations{at: map[string]time.Time{}, clock: c}
}

// Created records that key was created now.
func (c *Creations) Created(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[key] = c.clock.Now()
}

// Wait tells how long a reconcile that finds key missing from its cache
// waits before creating it again (0: create). The cache's create event
// brings the key back sooner.
func (c *Creations) Wait(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.at[key]
	if !ok {
		return 0
	}
	wait := at.Add(Patience).Sub(c.clock.Now())
	if wait <= 0 {
		delete(c.at, key)
		return 0
	}
	return wait
}

// Reserve records key as created now, before the create is sent, and
// returns 0; or, when key was created or reserved less than Patience ago,
// records nothing and returns how long to wait. Two reconciles that may
// create the same object at once (a controller with two kinds of keys)
// then send one create between them. A create that fails releases the
// record with Seen.
func (c *Creations) Reserve(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if at, ok := c.at[key]; ok {
		if wait := at.Add(Patience).Sub(now); wait > 0 {
			return wait
		}
	}
	c.at[key] = now
	return 0
}

// Seen drops key: the cache shows it.
func (c *Creations) Seen(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.at, key)
}
