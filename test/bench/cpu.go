package main

import (
	"fmt"
	"strconv"
	"strings"
)

// procStat is what the bench reads of a /proc/<pid>/stat line.
type procStat struct {
	command string
	parent  int
	// seconds is the user and system CPU time.
	seconds float64
}

// parseStat reads a /proc/<pid>/stat line: "pid (comm) state ppid ..." with
// utime and stime the 14th and 15th fields. The command may hold spaces and
// parentheses, so it runs to the last ')'.
func parseStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("no command in %q", line)
	}
	fields := strings.Fields(line[end+1:]) // from the 3rd field, state
	if len(fields) < 13 {
		return procStat{}, fmt.Errorf("%d fields after the command, want at least 13", len(fields))
	}
	parent, err := strconv.Atoi(fields[1])
	if err != nil {
		return procStat{}, fmt.Errorf("parent pid: %w", err)
	}
	var ticks float64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("CPU time: %w", err)
		}
		ticks += float64(n)
	}
	return procStat{command: line[open+1 : end], parent: parent, seconds: ticks / clockTicksPerSecond}, nil
}

// cpuUse is CPU seconds by process: the control plane, the manager, the
// bench itself (its observers and, for the floor, its writer). On two
// cores they share, it tells what a phase's time went to.
type cpuUse map[string]float64

// cpuNow reads the CPU spent so far, the manager's too when m is running;
// nil (said once in the log) where /proc cannot tell.
func (b *bench) cpuNow(m *managerProcess) cpuUse {
	pid := 0
	if m != nil {
		pid = m.pid()
	}
	use, err := processCPU(pid)
	if err != nil {
		b.progress.logf("CPU use not read: %v", err)
		return nil
	}
	return use
}

// minus is the CPU spent between an earlier reading and this one.
func (u cpuUse) minus(earlier cpuUse) cpuUse {
	out := cpuUse{}
	for name, s := range u {
		out[name] = s - earlier[name]
	}
	return out
}

// String is e.g. "kube-apiserver 812 s, etcd 95 s, manager 240 s, bench 120 s".
func (u cpuUse) String() string {
	var parts []string
	for _, name := range []string{"kube-apiserver", "etcd", "manager", "bench"} { // all processCPU reads
		if s, ok := u[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f s", name, s))
		}
	}
	return strings.Join(parts, ", ")
}
