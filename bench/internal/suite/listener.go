package suite

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoListener says that no process this user can see listens on the address (the server runs
// on another host, in another container or as another user).
var ErrNoListener = errors.New("no local process found listening there")

// ListenerPID finds the local process listening on the TCP address addr (host:port; a listener
// on the wildcard address counts for any host), from /proc/net/tcp{,6} and the processes'
// open sockets: the load tool uses it to count the CPU of the suite's Redis.
func ListenerPID(addr string) (int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q: %w", portStr, err)
	}
	want := net.ParseIP(host)
	if want == nil && host != "" && host != "localhost" {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return 0, fmt.Errorf("%s: %w", host, ErrNoListener)
		}
		want = ips[0]
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, l := range listeners(b) {
			if l.port == uint16(port) && (want == nil || l.ip.IsUnspecified() || l.ip.Equal(want)) {
				inodes[l.inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("%s: %w", addr, ErrNoListener)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		target, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(target, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, fmt.Errorf("%s: %w", addr, ErrNoListener)
}

// listener is one listening socket of a /proc/net/tcp table.
type listener struct {
	ip    net.IP
	port  uint16
	inode string
}

// listeners reads the listening sockets (state 0A) of a /proc/net/tcp or tcp6 table, whose
// addresses are hex in the kernel's byte order (each 32-bit word little-endian on the machines
// this runs on).
func listeners(table []byte) []listener {
	var out []listener
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		hostHex, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		raw, err := hex.DecodeString(hostHex)
		if err != nil || (len(raw) != 4 && len(raw) != 16) {
			continue
		}
		for i := 0; i+4 <= len(raw); i += 4 {
			raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil {
			continue
		}
		out = append(out, listener{ip: net.IP(raw), port: uint16(port), inode: f[9]})
	}
	return out
}
