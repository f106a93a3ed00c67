package rpcserver

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A kept HTTP/1.1 connection the server closes just as a unary call is written on it (its
// idle timeout, a shutdown closing idle connections) costs the call nothing: it is sent again
// on a new connection, once.
func TestUnaryCallOutlivesAKeptConnectionClosedUnderIt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns, requests atomic.Int64
	var refuseAll, badBody atomic.Bool
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					b, _ := io.ReadAll(req.Body)
					if string(b) != "body" {
						badBody.Store(true)
					}
					requests.Add(1)
					if n == 1 && i == 1 || refuseAll.Load() {
						return // the first connection's second request: closed unanswered
					}
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/proto\r\nContent-Length: 0\r\n\r\n")
				}
			}()
		}
	}()
	c := NewHTTPClient()
	call := func() error {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+ln.Addr().String()+"/x.v1.S/M", strings.NewReader("body"))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/proto")
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	for i := range 2 {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if c, r := conns.Load(), requests.Load(); c != 2 || r != 3 || badBody.Load() {
		t.Fatalf("%d connections, %d requests, a body lost %v; want 2 and 3 (the second call sent again, whole, on a new connection)", c, r, badBody.Load())
	}

	// A server that closes every call unanswered: a call on a kept connection is tried once
	// more, not in a loop; a call on a new connection (the server may have acted on it) is not
	// tried again.
	requests.Store(0)
	refuseAll.Store(true)
	if err := call(); err == nil {
		t.Fatal("a call the server never answered succeeded")
	}
	if r := requests.Load(); r != 2 {
		t.Fatalf("a call on a kept connection the server closes every time was sent %d times, want 2", r)
	}
	requests.Store(0)
	if err := call(); err == nil {
		t.Fatal("a call the server never answered succeeded")
	}
	if r := requests.Load(); r != 1 {
		t.Fatalf("a call on a new connection closed unanswered was sent %d times, want 1", r)
	}
}
