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

// rssBytes needs /proc; elsewhere memory is not reported.
func rssBytes(int) (peak, current, anon uint64, err error) {
	return 0, 0, 0, errors.New("memory is only read on Linux")
}

// processCPU needs /proc; elsewhere CPU is not reported.
func processCPU(int) (map[string]float64, error) {
	return nil, errors.New("CPU is only read on Linux")
}
