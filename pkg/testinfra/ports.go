package testinfra

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Ports handed to child processes come from below the kernel's ephemeral range (32768+ on
// Linux): a port picked with ":0" and closed again can be taken by any outgoing connection
// before the child binds it, and the child then fails with "address already in use".
const (
	portLow  = 20000
	portHigh = 32000
)

// A port handed out stays reserved while the process that picked it lives: in this process by
// handed, across the test processes `go test` runs side by side by a file named after the port
// holding the picker's pid. Without it two packages' tests could both find a port free in the
// moment before either child binds it, or take a port a fault test's killed service is about
// to bind again.
var (
	handedMu sync.Mutex
	handed   = map[int]bool{}
)

// portsDir holds the cross-process reservations.
var portsDir = filepath.Join(os.TempDir(), "picoclaw-test-ports")

// FreeAddrs returns n distinct loopback addresses that were free a moment ago and that no other
// living test process has reserved, for services a test starts as processes.
func FreeAddrs(n int) ([]string, error) {
	handedMu.Lock()
	defer handedMu.Unlock()
	_ = os.MkdirAll(portsDir, 0o777)
	out := make([]string, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > 100*n {
			return nil, fmt.Errorf("testinfra: no free port found in %d..%d", portLow, portHigh)
		}
		port := portLow + rand.IntN(portHigh-portLow)
		if handed[port] || !reservePort(port) {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		_ = ln.Close()
		handed[port] = true
		out = append(out, addr)
	}
	return out, nil
}

// reservePort claims port for this process unless a living process holds it. A reservation
// whose process has ended is taken over. Where the directory cannot be written the claim
// succeeds (the listen check alone then guards the port).
func reservePort(port int) bool {
	path := filepath.Join(portsDir, strconv.Itoa(port))
	for range 2 {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			_, _ = f.WriteString(strconv.Itoa(os.Getpid()))
			_ = f.Close()
			return true
		}
		if !errors.Is(err, os.ErrExist) {
			return true
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && (pid == os.Getpid() || alive(pid)) {
			return false
		}
		_ = os.Remove(path)
	}
	return false
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
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
