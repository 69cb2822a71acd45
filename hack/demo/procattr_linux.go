package main

import "syscall"

// childProcAttr puts a child in its own process group, and has the kernel
// send it SIGTERM should the demo die without stopping it (SIGKILL).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
