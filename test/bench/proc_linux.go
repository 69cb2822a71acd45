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

// clockTicksPerSecond is the unit of /proc/<pid>/stat's CPU times (USER_HZ,
// 100 on every Linux the project runs on).
const clockTicksPerSecond = 100

// processCPU reads, from /proc, the CPU seconds (user and system) of this
// process, of the control plane it started (kube-apiserver, etcd) and of
// the process pid under the name manager when pid is not 0.
func processCPU(managerPID int) (map[string]float64, error) {
	out := map[string]float64{}
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone meanwhile
		}
		st, err := parseStat(string(raw))
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		switch {
		case pid == self:
			out["bench"] += st.seconds
		case pid == managerPID:
			out["manager"] += st.seconds
		case st.parent == self && (st.command == "kube-apiserver" || st.command == "etcd"):
			out[st.command] += st.seconds
		}
	}
	return out, nil
}
