package main

import (
	"context"
	"testing"
)

// TestBusyLoopStopsWhenToldTo: the busy loop of the -floor-load round ends
// with its stop function, also at full load, where it never sleeps.
func TestBusyLoopStopsWhenToldTo(t *testing.T) {
	for _, share := range []float64{0.1, 1} {
		stop := startBusyLoop(context.Background(), share)
		stop()
	}
}
