//go:build unix

package h1client

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// socketAlive tells whether nothing waits on a kept connection's socket: no byte and no end of
// stream. It peeks without waiting.
func socketAlive(nc net.Conn) bool {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	live := false
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		// Nothing to read is a live connection; a byte, the end of the stream (0) or an error
		// is not.
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		live = errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK)
		return true
	})
	return err == nil && live
}
