//go:build !linux

// Command demo needs Linux: the local OCM runs its pods in Linux namespaces.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "the demo runs real OCM locally, which needs Linux (mount and network namespaces)")
	os.Exit(1)
}
