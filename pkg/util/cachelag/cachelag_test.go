package cachelag

import (
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
