package rpcserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// inflight counts the requests being served and the connections that are not idle, so a
// shutdown can end the moment the last one finishes instead of waiting for
// http.Server.Shutdown's idle polling (which backs off from 1 ms to half a second between looks:
// a connection that went idle 10 ms in is seen at 15 ms, one that took 40 ms at 63 ms).
type inflight struct {
	n    atomic.Int64
	mu   sync.Mutex
	idle chan struct{} // closed when n drops to 0 while someone waits

	// busy are the connections new (no request read yet) or active (a request, or HTTP/2);
	// quiet is closed when busy empties while someone waits.
	busy  map[net.Conn]struct{}
	quiet chan struct{}
}

// connState is the servers' http.Server.ConnState hook.
func (f *inflight) connState(c net.Conn, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch st {
	case http.StateNew, http.StateActive:
		if f.busy == nil {
			f.busy = map[net.Conn]struct{}{}
		}
		f.busy[c] = struct{}{}
		return
	}
	delete(f.busy, c)
	if len(f.busy) == 0 && f.quiet != nil {
		close(f.quiet)
		f.quiet = nil
	}
}

// quieted is closed once no connection is new or active (at once when none is).
func (f *inflight) quieted() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.busy) == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if f.quiet == nil {
		f.quiet = make(chan struct{})
	}
	return f.quiet
}

func (f *inflight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.n.Add(1)
		defer f.done()
		next.ServeHTTP(w, r)
	})
}

func (f *inflight) done() {
	if f.n.Add(-1) != 0 {
		return
	}
	f.mu.Lock()
	if f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// wait returns when no request is in flight or ctx ends; false means requests were still
// running.
func (f *inflight) wait(ctx context.Context) bool {
	for {
		f.mu.Lock()
		if f.n.Load() == 0 {
			f.mu.Unlock()
			return true
		}
		if f.idle == nil {
			f.idle = make(chan struct{})
		}
		ch := f.idle
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return f.n.Load() == 0
		}
	}
}

// drain shuts the servers down: listeners close at once, requests in flight get until ctx ends
// to finish, then every connection is closed (streams such as Watch do not end by themselves).
func drain(ctx context.Context, f *inflight, servers []*http.Server) error {
	done := make(chan error, len(servers))
	for _, hs := range servers {
		go func() { done <- hs.Shutdown(ctx) }()
	}
	f.wait(ctx)
	// A response is written out after its handler returns: give the servers a moment to finish
	// them and see their connections idle (HTTP/2 ones closed after their GOAWAY), then close
	// what is left rather than wait for Shutdown's next idle poll.
	settle := time.NewTimer(settleTime)
	defer settle.Stop()
	quiet := f.quieted()
	var err error
	finished := 0
	for finished < len(servers) {
		select {
		case e := <-done:
			finished++
			if e != nil && !errors.Is(e, http.ErrServerClosed) {
				err = e
			}
			continue
		case <-quiet:
		case <-settle.C:
		case <-ctx.Done():
		}
		break
	}
	for _, hs := range servers {
		_ = hs.Close()
	}
	for ; finished < len(servers); finished++ {
		<-done
	}
	return err
}

// settleTime bounds the wait, once no request is in flight, for the responses to be written
// and the connections to go idle.
const settleTime = 50 * time.Millisecond
