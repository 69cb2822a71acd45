//go:build !unix

package main

import "syscall"

// childProcAttr has nothing to set where there are no process groups.
func childProcAttr() *syscall.SysProcAttr {
	return nil
}
