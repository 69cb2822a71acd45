// Package memlimit gives the Go runtime a soft memory limit from the
// container's memory limit, so that the garbage collector paces itself to
// the container rather than letting the heap grow to twice what is live
// (GOGC's default) and the kernel kill the process at a cold start or a
// full resync, when a hub's tens of thousands of objects arrive at once.
package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
)

// EnvContainerLimit is set by the chart to the container's limits.memory
// in bytes (a resourceFieldRef); where no limit is set, the kubelet passes
// the node's allocatable memory.
const EnvContainerLimit = "CONTAINER_MEMORY_LIMIT"

// Share of the container limit the heap may use: the rest is for the
// runtime, stacks and the binary's own pages.
const Share = 0.9

// Soft is the soft limit to set, in bytes, from the process environment:
// none when GOMEMLIMIT is set (the operator's choice wins) or the container
// limit is absent; an error when it cannot be read.
func Soft(getenv func(string) string) (int64, bool, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false, nil
	}
	raw := getenv(EnvContainerLimit)
	if raw == "" {
		return 0, false, nil
	}
	limit, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || limit <= 0 {
		return 0, false, fmt.Errorf("%s=%q is not a positive number of bytes", EnvContainerLimit, raw)
	}
	return int64(math.Floor(float64(limit) * Share)), true, nil
}

// Apply sets the soft limit Soft finds, and returns it (0 when none).
func Apply(getenv func(string) string) (int64, error) {
	limit, ok, err := Soft(getenv)
	if !ok || err != nil {
		return 0, err
	}
	debug.SetMemoryLimit(limit)
	return limit, nil
}
