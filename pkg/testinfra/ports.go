package testinfra

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// Ports handed to child processes come from below the kernel's ephemeral range (32768+ on
// Linux): a port picked with ":0" and closed again can be taken by any outgoing connection
// before the child binds it, and the child then fails with "address already in use".
const (
	portLow  = 20000
	portHigh = 32000
)

// FreeAddrs returns n distinct loopback addresses that were free a moment ago, for services a
// test starts as processes.
func FreeAddrs(n int) ([]string, error) {
	out := make([]string, 0, n)
	seen := map[int]bool{}
	for tries := 0; len(out) < n; tries++ {
		if tries > 100*n {
			return nil, fmt.Errorf("testinfra: no free port found in %d..%d", portLow, portHigh)
		}
		port := portLow + rand.IntN(portHigh-portLow)
		if seen[port] {
			continue
		}
		seen[port] = true
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		_ = ln.Close()
		out = append(out, addr)
	}
	return out, nil
}

// FreeAddr is FreeAddrs(1) for a test.
func FreeAddr(t TB) string {
	t.Helper()
	addrs, err := FreeAddrs(1)
	if err != nil {
		t.Fatalf("%v", err)
		return ""
	}
	return addrs[0]
}
