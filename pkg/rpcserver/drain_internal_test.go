package rpcserver

import (
	"net"
	"net/http"
	"testing"
)

// The shutdown stops waiting once no connection is new or active: an HTTP/1.1 connection that
// went idle, an HTTP/2 one that closed after its GOAWAY, a hijacked one.
func TestQuietedWhenNoConnectionIsBusy(t *testing.T) {
	var f inflight
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	if !closed(f.quieted()) {
		t.Fatal("no connection at all: not quiet")
	}
	a, b, c := &net.TCPConn{}, &net.TCPConn{}, &net.TCPConn{}
	f.connState(a, http.StateNew)
	f.connState(b, http.StateNew)
	f.connState(b, http.StateActive)
	f.connState(c, http.StateNew)
	quiet := f.quieted()
	for _, step := range []struct {
		c     net.Conn
		st    http.ConnState
		quiet bool
	}{
		{a, http.StateActive, false},
		{a, http.StateIdle, false},   // b (active) and c (new, a request may be on its way) remain
		{b, http.StateClosed, false}, // c remains
		{a, http.StateActive, false}, // a request on the idle connection
		{c, http.StateHijacked, false},
		{a, http.StateIdle, true},
	} {
		f.connState(step.c, step.st)
		if closed(quiet) != step.quiet {
			t.Fatalf("after %v: quiet %v, want %v", step.st, closed(quiet), step.quiet)
		}
	}
	if len(f.busy) != 0 {
		t.Fatalf("%d connections still tracked", len(f.busy))
	}
	f.connState(a, http.StateClosed)
	if len(f.busy) != 0 || !closed(f.quieted()) {
		t.Fatal("a closed connection is tracked")
	}
}
