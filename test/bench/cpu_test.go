package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	line := "4242 (kube (api) server) S 17 4242 17 0 -1 4194560 1034 0 0 0 1250 310 0 0 20 0 12 0 9000 1 2 3\n"
	got, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{command: "kube (api) server", parent: 17, seconds: 15.6}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(procStat{})); diff != "" {
		t.Errorf("parseStat (-want +got):\n%s", diff)
	}
	if _, err := parseStat("4242 kube-apiserver S 17"); err == nil {
		t.Error("parseStat of a line with no command: no error")
	}
}

func TestCPUUse(t *testing.T) {
	before := cpuUse{"kube-apiserver": 100, "etcd": 10, "bench": 5}
	after := cpuUse{"kube-apiserver": 400, "etcd": 40, "bench": 25, "manager": 90}
	if got, want := after.minus(before).String(), "kube-apiserver 300 s, etcd 30 s, manager 90 s, bench 20 s"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
