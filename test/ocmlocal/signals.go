//go:build linux

package ocmlocal

import (
	"os"
	"os/signal"
	"syscall"
)

// StopOnSignal stops the environment when the harness gets SIGINT (Ctrl-C)
// or SIGTERM, then exits with 130: the processes run in process groups of
// their own, so the terminal's Ctrl-C does not reach them. The returned
// function ends the watch (for callers that handle signals themselves
// afterwards).
func (e *Env) StopOnSignal() (release func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-signals:
			e.progressf("%v: stopping every process", sig)
			e.Stop()
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(signals)
		close(done)
	}
}
