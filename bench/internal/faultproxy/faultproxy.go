// Package faultproxy is a TCP proxy for fault tests. It forwards bytes between its clients and
// its upstreams and can hold every connection still (Pause), as a stopped server or a network
// partition would, or drop them all (Reset), as a restarted server would — without touching
// the server behind it, which other tests may share. With several upstreams it is a
// round-robin balancer: each new connection goes to the next upstream that accepts it.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards connections accepted on its listener to its upstreams.
type Proxy struct {
	ln        net.Listener
	upstreams []string
	dialer    net.Dialer
	next      atomic.Uint64

	mu     sync.Mutex
	open   chan struct{} // closed while bytes flow; open (blocking) while paused
	paused bool
	conns  map[*link]struct{}
	closed bool
	wg     sync.WaitGroup

	accepted, refused, held atomic.Int64
}

// link is one client connection and its upstream.
type link struct {
	client net.Conn
	done   chan struct{}

	mu     sync.Mutex
	server net.Conn
	closed bool
}

// connect attaches the upstream connection; false (and server closed) when the link was
// dropped meanwhile.
func (l *link) connect(server net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = server.Close()
		return false
	}
	l.server = server
	return true
}

func (l *link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.done)
	_ = l.client.Close()
	if l.server != nil {
		_ = l.server.Close()
	}
}

// Listen starts a proxy on addr (":0" style addresses pick a free port) to the upstreams.
func Listen(addr string, upstreams ...string) (*Proxy, error) {
	if len(upstreams) == 0 {
		return nil, errors.New("faultproxy: no upstream")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{ln: ln, upstreams: upstreams, dialer: net.Dialer{Timeout: 2 * time.Second},
		open: open, conns: map[*link]struct{}{}}
	p.wg.Go(p.serve)
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Upstreams are the addresses connections are forwarded to.
func (p *Proxy) Upstreams() []string { return p.upstreams }

// Pause holds every connection: no byte is forwarded either way (at most one read each way
// is taken in and held, as a kernel buffer would), and new connections are accepted but not
// forwarded, until Resume. What was held is forwarded on Resume, even for a client that has
// given up meanwhile — as a stopped server that is continued reads what was sent to it.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused, p.open = true, make(chan struct{})
	}
}

// Resume lets the held bytes and connections through.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.open)
	}
}

// PauseFor pauses for d (or until ctx ends) and resumes.
func (p *Proxy) PauseFor(ctx context.Context, d time.Duration) {
	p.Pause()
	defer p.Resume()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Paused reports whether the proxy holds its connections.
func (p *Proxy) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// Reset drops every connection open now and returns how many there were.
func (p *Proxy) Reset() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	return len(links)
}

// Conns is the number of connections open now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted counts connections forwarded to an upstream; Refused those no upstream accepted.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Refused counts client connections closed because no upstream accepted them.
func (p *Proxy) Refused() int64 { return p.refused.Load() }

// Held is the number of bytes read from one side and waiting for Resume to reach the other.
func (p *Proxy) Held() int64 { return p.held.Load() }

// Close stops listening, drops every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	if p.paused {
		p.paused = false
		close(p.open)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.Reset()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		l := &link{client: c, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			return
		}
		p.conns[l] = struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() {
			defer func() {
				l.close()
				p.mu.Lock()
				delete(p.conns, l)
				p.mu.Unlock()
			}()
			p.forward(l)
		})
	}
}

// gate returns the channel that is closed while bytes may flow.
func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

// wait blocks while the proxy is paused; false when the link was dropped meanwhile.
func (p *Proxy) wait(l *link) bool {
	for {
		select {
		case <-l.done:
			return false
		case <-p.gate():
			// Paused again between the wake-up and now: wait for the next Resume.
			if !p.Paused() {
				return true
			}
		}
	}
}

func (p *Proxy) forward(l *link) {
	// A connection accepted during a pause is held before it reaches any upstream.
	if !p.wait(l) {
		return
	}
	server, err := p.dial(l)
	if err != nil {
		p.refused.Add(1)
		return
	}
	if !l.connect(server) {
		return // dropped while dialling
	}
	p.accepted.Add(1)
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(l, server, l.client) })
	wg.Go(func() { p.pipe(l, l.client, server) })
	wg.Wait()
}

// dial connects to the next upstream in turn, trying the others when it refuses.
func (p *Proxy) dial(l *link) (net.Conn, error) {
	start := p.next.Add(1) - 1
	var errs []error
	for i := range uint64(len(p.upstreams)) {
		addr := p.upstreams[(start+i)%uint64(len(p.upstreams))]
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-l.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		c, err := p.dialer.DialContext(ctx, "tcp", addr)
		cancel()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// pipe copies src to dst, holding each chunk while the proxy is paused. The first side to end
// ends the link.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	defer l.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.held.Add(int64(n))
			ok := p.wait(l)
			p.held.Add(-int64(n))
			if !ok {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
