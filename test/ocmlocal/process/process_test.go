//go:build linux

package process

import (
	"net"
	"testing"
)

// TestFreePortsAreBelowTheEphemeralRange: the ports are distinct, free, and
// outside the range outgoing connections take their local ports from.
func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	ports, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if port < lowestPort || port >= ephemeralPortsFrom() || seen[port] {
			t.Errorf("port %d: want distinct ports in [%d, %d)", port, lowestPort, ephemeralPortsFrom())
		}
		seen[port] = true
		l, err := net.Listen("tcp", HostPort(port))
		if err != nil {
			t.Errorf("port %d is not free: %v", port, err)
			continue
		}
		l.Close()
	}
}
