//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// errInterrupted is the cause of the demo's context when the user stops it.
var errInterrupted = errors.New("interrupted")

// interruptibleContext is cancelled on Ctrl-C, SIGTERM, or when the process
// that started the demo goes away (`make` killed by SIGTERM kills `go run`
// but not the demo it runs). The returned function releases the signals; call
// it only after cleaning up, so that signals arriving during the cleanup are
// caught rather than killing the demo halfway.
func interruptibleContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	// A write to a closed stdout pipe must not kill the demo before it has
	// stopped its processes.
	signal.Ignore(syscall.SIGPIPE)
	done := make(chan struct{})
	orphaned := parentExited(done)
	go func() {
		select {
		case sig := <-signals:
			fmt.Printf("\nReceived %v: cleaning up...\n", sig)
			cancel(fmt.Errorf("%w by %v", errInterrupted, sig))
		case <-orphaned:
			fmt.Println("\nThe process that started the demo exited: cleaning up...")
			cancel(fmt.Errorf("%w: parent process exited", errInterrupted))
		case <-done:
			return
		}
		for {
			select {
			case <-signals:
				fmt.Println("Still cleaning up, one moment...")
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(signals)
		cancel(nil)
	}
}

// interrupted tells whether the demo was asked to stop.
func interrupted(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errInterrupted)
}

// parentExited is closed when the demo's parent process changes, i.e. the
// parent died and the demo was re-parented.
func parentExited(done <-chan struct{}) <-chan struct{} {
	gone := make(chan struct{})
	parent := os.Getppid()
	go func() {
		ticker := time.NewTicker(500 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				if os.Getppid() != parent {
					close(gone)
					return
				}
			}
		}
	}()
	return gone
}
