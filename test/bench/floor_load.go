package main

import (
	"context"
	"time"
)

// busyPeriod is how often the busy loop wakes: it works for its share of
// each period and sleeps the rest.
const busyPeriod = 100 * time.Millisecond

// startBusyLoop keeps share of one core busy until the returned function
// is called (or ctx ends), allocating as a controller decoding watch events
// does, so that its collector and its memory traffic weigh on the other
// processes as well as its cycles. The -floor-load round times the floor
// beside it: what the manager's CPU alone costs the API server on the
// same cores, with no request of its own.
func startBusyLoop(ctx context.Context, share float64) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		busyLoop(ctx, time.Duration(share*float64(busyPeriod)))
	}()
	return func() {
		cancel()
		<-done
	}
}

func busyLoop(ctx context.Context, busy time.Duration) {
	// About 32 MB kept live, replaced a KiB at a time.
	live := make([][]byte, 1<<15)
	next := 0
	for {
		for end := time.Now().Add(busy); time.Now().Before(end); next = (next + 1) % len(live) {
			live[next] = make([]byte, 1024)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(busyPeriod - busy):
		}
	}
}
