//go:build !linux

package main

import (
	"errors"
	"syscall"
)

// managerSysProcAttr puts the manager in a process group of its own, so that
// a Ctrl-C in the terminal reaches only the benchmark, which then stops the
// manager in order.
func managerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// peakRSSBytes needs /proc; elsewhere the peak RSS is not reported.
func peakRSSBytes(int) (uint64, error) {
	return 0, errors.New("peak RSS is only read on Linux")
}
