package cachelag

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestCreations(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	c := New(clock)
	steps := []struct {
		name  string
		act   func()
		after time.Duration
		key   string
		want  time.Duration
	}{
		{name: "never created: create", key: "a", want: 0},
		{name: "just created: wait for the cache", act: func() { c.Created("a") }, key: "a", want: Patience},
		{name: "another key: create", key: "b", want: 0},
		{name: "a second on: the rest", after: time.Second, key: "a", want: Patience - time.Second},
		{name: "past Patience: create again", after: Patience, key: "a", want: 0},
		{name: "forgotten once past: create", key: "a", want: 0},
		{name: "created again", act: func() { c.Created("a") }, key: "a", want: Patience},
		{name: "seen in the cache: nothing to wait for", act: func() { c.Seen("a") }, key: "a", want: 0},
	}
	for _, step := range steps {
		clock.SetTime(clock.Now().Add(step.after))
		if step.act != nil {
			step.act()
		}
		if got := c.Wait(step.key); got != step.want {
			t.Errorf("%s: Wait(%q) = %s, want %s", step.name, step.key, got, step.want)
		}
	}
	if len(c.at) != 0 {
		t.Errorf("records kept: %v", c.at)
	}
}

// TestReserve: of reconciles that would create the same object at once,
// one reserves it and sends the create; the others wait for Patience, or
// until the create fails and releases it.
func TestReserve(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	c := New(clock)
	var reserved atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if c.Reserve("a") == 0 {
				reserved.Add(1)
			}
		})
	}
	wg.Wait()
	if got := reserved.Load(); got != 1 {
		t.Fatalf("%d reconciles reserved the create, want 1", got)
	}
	if got := c.Wait("a"); got != Patience {
		t.Errorf("after the reservation: Wait = %s, want %s", got, Patience)
	}
	c.Seen("a") // the create failed
	if got := c.Reserve("a"); got != 0 {
		t.Errorf("after a failed create: Reserve = %s, want 0", got)
	}
	clock.SetTime(clock.Now().Add(Patience))
	if got := c.Reserve("a"); got != 0 {
		t.Errorf("past Patience: Reserve = %s, want 0", got)
	}
}
