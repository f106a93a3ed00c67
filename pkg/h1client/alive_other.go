//go:build !unix

package h1client

import "net"

// socketAlive cannot peek at a socket here: a kept connection the server closed is found when a
// request is written on it (see RoundTrip).
func socketAlive(net.Conn) bool { return true }
