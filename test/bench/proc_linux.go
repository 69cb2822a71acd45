package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// managerSysProcAttr puts the manager in a process group of its own, so that
// a Ctrl-C in the terminal reaches only the benchmark, which then stops the
// manager in order; and has the kernel kill the manager should the benchmark
// itself be killed without a chance to clean up.
func managerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// rssBytes reads, from /proc/<pid>/status, the peak resident set size
// (VmHWM), the current one (VmRSS) and its anonymous part (RssAnon: the heap
// and stacks, without the pages of the binary that are mapped from its file).
func rssBytes(pid int) (peak, current, anon uint64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() { _ = f.Close() }()
	fields := map[string]*uint64{"VmHWM:": &peak, "VmRSS:": &current, "RssAnon:": &anon}
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), "\t")
		target, ok := fields[name]
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("parsing %s of pid %d: %w", name, pid, err)
		}
		*target = kb * 1024
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, 0, err
	}
	if found != len(fields) {
		return 0, 0, 0, fmt.Errorf("no VmHWM, VmRSS or RssAnon in /proc/%d/status", pid)
	}
	return peak, current, anon, nil
}
