package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// upstream is a line server: it answers each line with "<name>:<line>" and keeps every line
// it received.
type upstream struct {
	ln       net.Listener
	name     string
	mu       sync.Mutex
	lines    []string
	accepted int
}

func startUpstream(t *testing.T, name string) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{ln: ln, name: name}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.accepted++
			u.mu.Unlock()
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					u.mu.Lock()
					u.lines = append(u.lines, sc.Text())
					u.mu.Unlock()
					if _, err := io.WriteString(c, u.name+":"+sc.Text()+"\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return u
}

func (u *upstream) received() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.lines...)
}

func (u *upstream) connections() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.accepted
}

func listen(t *testing.T, upstreams ...string) *Proxy {
	t.Helper()
	p, err := Listen("127.0.0.1:0", upstreams...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, p *Proxy) *client {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// Bounds a hung test; no assertion depends on it.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &client{Conn: c, r: bufio.NewReader(c)}
}

func (c *client) call(t *testing.T, line string) string {
	t.Helper()
	c.send(t, line)
	return c.read(t)
}

func (c *client) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *client) read(t *testing.T) string {
	t.Helper()
	s, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(s, "\n")
}

func TestForwardsBothWays(t *testing.T) {
	u := startUpstream(t, "a")
	p := listen(t, u.ln.Addr().String())
	c := dial(t, p)
	for _, line := range []string{"PING", "SET k v", strings.Repeat("x", 50<<10)} {
		if got := c.call(t, line); got != "a:"+line {
			t.Fatalf("answer %.40q, want a:%.40q", got, line)
		}
	}
	if p.Accepted() != 1 || p.Conns() != 1 {
		t.Fatalf("accepted %d, open %d", p.Accepted(), p.Conns())
	}
}

// While paused nothing reaches the upstream; on Resume what was held goes through.
func TestPauseHoldsBytesUntilResume(t *testing.T) {
	u := startUpstream(t, "a")
	p := listen(t, u.ln.Addr().String())
	c := dial(t, p)
	if got := c.call(t, "before"); got != "a:before" {
		t.Fatal(got)
	}
	p.Pause()
	c.send(t, "during")
	testinfra.Eventually(t, 10*time.Second, "the proxy to hold the bytes", func() bool { return p.Held() > 0 })
	// The proxy holds them at its gate: they cannot have been written to the upstream.
	if got := u.received(); len(got) != 1 {
		t.Fatalf("upstream received %q while paused", got)
	}
	p.Resume()
	if got := c.read(t); got != "a:during" {
		t.Fatalf("after resume: %q", got)
	}
	if p.Held() != 0 {
		t.Fatalf("still held: %d", p.Held())
	}
}

// A connection opened during a pause is accepted but reaches no upstream before Resume.
func TestPauseHoldsNewConnections(t *testing.T) {
	u := startUpstream(t, "a")
	p := listen(t, u.ln.Addr().String())
	p.Pause()
	c := dial(t, p)
	testinfra.Eventually(t, 10*time.Second, "the proxy to accept the connection", func() bool { return p.Conns() == 1 })
	if p.Accepted() != 0 || u.connections() != 0 {
		t.Fatalf("forwarded during the pause: accepted %d, upstream saw %d", p.Accepted(), u.connections())
	}
	c.send(t, "hello")
	p.Resume()
	if got := c.read(t); got != "a:hello" {
		t.Fatal(got)
	}
}

// A client that gives up during a pause has still sent its command: the upstream gets it on
// Resume, as a stopped server that is continued would.
func TestHeldBytesOfAClosedClientArriveOnResume(t *testing.T) {
	u := startUpstream(t, "a")
	p := listen(t, u.ln.Addr().String())
	c := dial(t, p)
	if got := c.call(t, "first"); got != "a:first" {
		t.Fatal(got)
	}
	p.Pause()
	c.send(t, "INCR counter")
	testinfra.Eventually(t, 10*time.Second, "the proxy to hold the bytes", func() bool { return p.Held() > 0 })
	_ = c.Close()
	p.Resume()
	testinfra.Eventually(t, 10*time.Second, "the held command at the upstream", func() bool {
		got := u.received()
		return len(got) == 2 && got[1] == "INCR counter"
	})
	testinfra.Eventually(t, 10*time.Second, "the link to end", func() bool { return p.Conns() == 0 })
}

func TestResetDropsEveryConnection(t *testing.T) {
	u := startUpstream(t, "a")
	p := listen(t, u.ln.Addr().String())
	c1, c2 := dial(t, p), dial(t, p)
	c1.call(t, "x")
	c2.call(t, "y")
	if n := p.Reset(); n != 2 {
		t.Fatalf("Reset dropped %d connections, want 2", n)
	}
	for _, c := range []*client{c1, c2} {
		if _, err := c.r.ReadString('\n'); !errors.Is(err, io.EOF) {
			t.Fatalf("read after Reset: %v, want EOF", err)
		}
	}
	// The proxy itself keeps serving.
	if got := dial(t, p).call(t, "again"); got != "a:again" {
		t.Fatal(got)
	}
}

// With several upstreams, connections go to each in turn, skipping one that refuses.
func TestRoundRobinSkipsARefusingUpstream(t *testing.T) {
	a, b := startUpstream(t, "a"), startUpstream(t, "b")
	p := listen(t, a.ln.Addr().String(), b.ln.Addr().String())
	var got []string
	for range 4 {
		got = append(got, dial(t, p).call(t, "hi"))
	}
	if strings.Join(got, ",") != "a:hi,b:hi,a:hi,b:hi" {
		t.Fatalf("answers %v", got)
	}
	_ = b.ln.Close()
	for range 3 {
		if got := dial(t, p).call(t, "hi"); got != "a:hi" {
			t.Fatalf("with b down: %q", got)
		}
	}
	_ = a.ln.Close()
	c := dial(t, p)
	if _, err := c.r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Fatalf("with every upstream down: %v, want the connection closed", err)
	}
	if p.Refused() != 1 {
		t.Fatalf("refused %d", p.Refused())
	}
}

// Closing the upstream's side of a link closes the client's.
func TestUpstreamCloseEndsTheLink(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.WriteString(c, "bye\n")
			_ = c.Close()
		}
	}()
	p := listen(t, ln.Addr().String())
	c := dial(t, p)
	if got := c.read(t); got != "bye" {
		t.Fatal(got)
	}
	if _, err := c.r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Fatalf("after the upstream closed: %v", err)
	}
}
