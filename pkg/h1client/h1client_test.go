package h1client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// counted is a test server that counts the connections it accepted and has open.
type counted struct {
	*httptest.Server
	accepted, open, maxOpen atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc, tlsOn bool) *counted {
	t.Helper()
	s := &counted{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.accepted.Add(1)
			n := s.open.Add(1)
			for {
				m := s.maxOpen.Load()
				if n <= m || s.maxOpen.CompareAndSwap(m, n) {
					break
				}
			}
		case http.StateClosed, http.StateHijacked:
			s.open.Add(-1)
		}
	}
	if tlsOn {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func (s *counted) transport(cfg Config) *Transport {
	if s.TLS != nil {
		cfg.TLS = &tls.Config{RootCAs: s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	}
	if cfg.Fallback == nil {
		cfg.Fallback = failing{}
	}
	return New(cfg)
}

// failing is a fallback that must not be used.
type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("sent to the fallback")
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Proto", r.Proto)
	w.Header().Set("X-Length", fmt.Sprint(r.ContentLength))
	_, _ = w.Write(append([]byte("echo:"), b...))
}

// post sends body to url and returns the answer's status and body.
func post(ctx context.Context, rt http.RoundTripper, u, body string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, opaque(body))
	if err != nil {
		return nil, "", err
	}
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return opaque(body), nil }
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// opaque is a body net/http does not know to be in memory (as a Connect client's is).
func opaque(s string) io.ReadCloser { return io.NopCloser(struct{ io.Reader }{strings.NewReader(s)}) }

func TestSendsOverHTTP1AndKeepsTheConnection(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			s := newServer(t, echo, tlsOn)
			tr := s.transport(Config{})
			for i := range 20 {
				resp, body, err := post(t.Context(), tr, s.URL+"/p?q=1", fmt.Sprint("hello ", i))
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprint("echo:hello ", i); body != want || resp.StatusCode != 200 {
					t.Fatalf("%d %q, want 200 %q", resp.StatusCode, body, want)
				}
				if p, n := resp.Header.Get("X-Proto"), resp.Header.Get("X-Length"); p != "HTTP/1.1" || n != fmt.Sprint(len(fmt.Sprint("hello ", i))) {
					t.Fatalf("server saw %s with Content-Length %s", p, n)
				}
				if tlsOn != (resp.TLS != nil) {
					t.Fatalf("resp.TLS %v over tls=%v", resp.TLS, tlsOn)
				}
			}
			if n := s.accepted.Load(); n != 1 {
				t.Fatalf("%d connections for 20 calls one after another, want 1", n)
			}
		})
	}
}

// A request's head and body leave in one write, also when the body is not a reader net/http
// knows to be in memory (it flushes the head on its own first then) and larger than a bufio
// buffer.
func TestRequestLeavesInOneWrite(t *testing.T) {
	s := newServer(t, echo, false)
	tr := s.transport(Config{})
	var writes atomic.Int64
	tr.wrap = func(c net.Conn) net.Conn { return &countingConn{Conn: c, writes: &writes} }
	for i, body := range []string{"small", strings.Repeat("large", 4000)} {
		writes.Store(0)
		if _, got, err := post(t.Context(), tr, s.URL, body); err != nil || got != "echo:"+body {
			t.Fatalf("%d bytes back, %v", len(got), err)
		}
		if n := writes.Load(); n != 1 {
			t.Fatalf("request %d (%d bytes of body) left in %d writes, want 1", i, len(body), n)
		}
	}
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func TestBoundsConnectionsPerHost(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		echo(w, r)
	}, false)
	tr := s.transport(Config{MaxConnsPerHost: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			if _, body, err := post(t.Context(), tr, s.URL, fmt.Sprint(i)); err != nil || body != fmt.Sprint("echo:", i) {
				errs <- fmt.Errorf("call %d: %q %v", i, body, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.accepted.Load(); n > 2 {
		t.Fatalf("%d connections with a bound of 2", n)
	}
}

func TestWaitingForAConnectionEndsWithTheContext(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		echo(w, r)
	}, false)
	defer close(release)
	tr := s.transport(Config{MaxConnsPerHost: 1})
	go func() { _, _, _ = post(context.Background(), tr, s.URL, "first") }()
	for s.accepted.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := post(ctx, tr, s.URL, "second"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's deadline", err)
	}
}

func TestCancelWhileWaitingForTheAnswer(t *testing.T) {
	var calls atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			_, _ = io.ReadAll(r.Body) // the server notices a closed connection once the body is read
			<-r.Context().Done()
			return
		}
		echo(w, r)
	}, false)
	tr := s.transport(Config{})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	if _, _, err := post(ctx, tr, s.URL, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the cancelled call returned after %s", d)
	}
	if _, body, err := post(t.Context(), tr, s.URL, "y"); err != nil || body != "echo:y" {
		t.Fatalf("the next call: %q %v", body, err)
	}
	if n := s.accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the cancelled call's is not reused)", n)
	}
}

func TestCancelWhileReadingTheBody(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, false)
	tr := s.transport(Config{})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "part" {
		t.Fatalf("%q %v", buf, err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if _, err := resp.Body.Read(buf); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Fatalf("a read after the failure: %v", err)
	}
}

// A kept connection the server closed (its idle timeout, a shutdown) is seen before a request
// is written on it: the call goes on a new connection, also one whose body cannot be had again.
func TestKeptConnectionTheServerClosedIsNotUsed(t *testing.T) {
	var handled atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		echo(w, r)
	}, false)
	// The client keeps its connections far longer than the server.
	tr := s.transport(Config{IdleTimeout: time.Hour})
	if _, body, err := post(t.Context(), tr, s.URL, "a"); err != nil || body != "echo:a" {
		t.Fatalf("%q %v", body, err)
	}
	s.CloseClientConnections()
	time.Sleep(20 * time.Millisecond)
	b, err := postOnce(t, tr, s.URL, "b")
	if err != nil {
		t.Fatalf("a call after the server closed the kept connection: %v", err)
	}
	if b != "echo:b" || handled.Load() != 2 || s.accepted.Load() != 2 {
		t.Fatalf("%q; the server handled %d calls on %d connections, want 2 and 2", b, handled.Load(), s.accepted.Load())
	}
}

// Bytes a server sends after an answer, unasked, are not taken for the next request's answer.
func TestStrayBytesAreNotTheNextAnswer(t *testing.T) {
	u := rawServer(t, func(c net.Conn, req *http.Request) bool {
		_, _ = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nconn")
		if req.URL.Path == "/stray" {
			// A second answer nobody asked for, sent with the first or a moment later.
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
			time.Sleep(10 * time.Millisecond)
			_, _ = io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
		}
		return true
	})
	tr := New(Config{Fallback: failing{}})
	if _, body, err := post(t.Context(), tr, u+"/stray", "x"); err != nil || body != "conn" {
		t.Fatalf("%q %v", body, err)
	}
	time.Sleep(30 * time.Millisecond)
	for i := range 3 {
		if resp, body, err := post(t.Context(), tr, u+"/", "x"); err != nil || body != "conn" || resp.StatusCode != 200 {
			t.Fatalf("call %d after the stray answers: %v %q %v", i, resp, body, err)
		}
	}
}

// A server that reads a call and closes the connection without a byte of answer, as one closing
// an idle connection just as the call arrives does: with RetryUnanswered (the suite's own
// services) a call on a kept connection is sent once more, not in a loop, and a call on a new
// connection (the server may have acted on it) not again; without it, only what net/http would
// send again (a GET, a request with an Idempotency-Key) is, never a plain POST.
func TestUnansweredCallsAreSentAgainOnce(t *testing.T) {
	var requests atomic.Int64
	var refuse atomic.Bool
	u := rawServer(t, func(c net.Conn, _ *http.Request) bool {
		requests.Add(1)
		if refuse.Load() {
			return false
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	call := func(tr *Transport, method string, header http.Header) error {
		req, _ := http.NewRequestWithContext(t.Context(), method, u, opaque("x"))
		req.ContentLength = 1
		req.GetBody = func() (io.ReadCloser, error) { return opaque("x"), nil }
		maps.Copy(req.Header, header)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	for _, c := range []struct {
		name   string
		cfg    Config
		method string
		header http.Header
		sent   int64
	}{
		{"RetryUnanswered", Config{RetryUnanswered: true}, http.MethodPost, nil, 2},
		{"a POST", Config{}, http.MethodPost, nil, 1},
		{"a POST with an Idempotency-Key", Config{}, http.MethodPost, http.Header{"Idempotency-Key": {"k"}}, 2},
		{"a PUT", Config{}, http.MethodPut, nil, 1},
		{"a GET", Config{}, http.MethodGet, nil, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Fallback = failing{}
			tr := New(c.cfg)
			refuse.Store(false)
			if err := call(tr, c.method, c.header); err != nil {
				t.Fatal(err)
			}
			refuse.Store(true)
			requests.Store(0)
			if err := call(tr, c.method, c.header); err == nil {
				t.Fatal("an unanswered call succeeded")
			}
			if n := requests.Load(); n != c.sent {
				t.Fatalf("a call on a kept connection was sent %d times, want %d", n, c.sent)
			}
			requests.Store(0)
			if err := call(tr, c.method, c.header); err == nil {
				t.Fatal("an unanswered call succeeded")
			}
			if n := requests.Load(); n != 1 {
				t.Fatalf("a call on a new connection was sent %d times, want 1", n)
			}
		})
	}
}

// A method or header field net/http's transport refuses is refused, not written.
func TestInvalidRequestsAreRefused(t *testing.T) {
	s := newServer(t, echo, false)
	tr := s.transport(Config{})
	for name, mod := range map[string]func(*http.Request){
		"a method with a space":      func(r *http.Request) { r.Method = "GET / HTTP/1.1\r\nX:" },
		"a header name with a colon": func(r *http.Request) { r.Header["X:Y"] = []string{"v"} },
		"a header value with CR LF":  func(r *http.Request) { r.Header.Set("X-A", "v\r\nX-Injected: 1") },
		"a header value with a NUL":  func(r *http.Request) { r.Header.Set("X-A", "v\x00") },
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
		mod(req)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Errorf("%s: sent", name)
		}
	}
	if n := s.accepted.Load(); n != 0 {
		t.Fatalf("%d connections opened for invalid requests", n)
	}
}

func TestConnectionCloseIsNotKept(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		echo(w, r)
	}, false)
	tr := s.transport(Config{})
	for i := range 3 {
		if _, body, err := post(t.Context(), tr, s.URL, "x"); err != nil || body != "echo:x" {
			t.Fatalf("call %d: %q %v", i, body, err)
		}
	}
	if n := s.accepted.Load(); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
}

func TestBodyClosedEarlyClosesTheConnection(t *testing.T) {
	big := strings.Repeat("z", 64<<10)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, big) }, false)
	tr := s.transport(Config{})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if _, err := resp.Body.Read(buf); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Fatalf("read after close: %v", err)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || string(b) != big {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if n := s.accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestInformationalAnswersAreSkipped(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		echo(w, r)
	}, false)
	tr := s.transport(Config{})
	resp, body, err := post(t.Context(), tr, s.URL, "x")
	if err != nil || resp.StatusCode != 200 || body != "echo:x" {
		t.Fatalf("%v %q %v", resp, body, err)
	}
}

func TestAnswersWithoutABodyKeepTheConnection(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/none" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_, _ = io.WriteString(w, "some")
	}, false)
	tr := s.transport(Config{})
	for _, c := range []struct{ method, path string }{{http.MethodHead, "/"}, {http.MethodGet, "/none"}, {http.MethodGet, "/"}, {http.MethodHead, "/"}} {
		req, _ := http.NewRequestWithContext(t.Context(), c.method, s.URL+c.path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		want := "some"
		if c.method == http.MethodHead || c.path == "/none" {
			want = ""
		}
		if err != nil || string(b) != want {
			t.Fatalf("%s %s: %q %v", c.method, c.path, b, err)
		}
	}
	if n := s.accepted.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

func TestChunkedAnswer(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		for i := range 5 {
			fmt.Fprintf(w, "chunk%d;", i)
			w.(http.Flusher).Flush()
		}
	}, false)
	tr := s.transport(Config{})
	for range 2 {
		_, body, err := post(t.Context(), tr, s.URL, "x")
		if err != nil || body != "chunk0;chunk1;chunk2;chunk3;chunk4;" {
			t.Fatalf("%q %v", body, err)
		}
	}
	if n := s.accepted.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

// recorder is a fallback that answers 299 and records that it was asked.
type recorder struct{ n atomic.Int64 }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: 299, Body: http.NoBody, Request: req}, nil
}

func TestWhatItDoesNotSendGoesToTheFallback(t *testing.T) {
	s := newServer(t, echo, false)
	proxy, _ := url.Parse("http://proxy.test:3128")
	cases := map[string]struct {
		cfg Config
		req func() *http.Request
	}{
		"a proxy": {Config{Proxy: func(*http.Request) (*url.URL, error) { return proxy, nil }}, func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, s.URL, nil)
			return r
		}},
		"a body of unknown length": {Config{}, func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, s.URL, opaque("x"))
			r.ContentLength = -1
			return r
		}},
		"a body above MaxBody": {Config{}, func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, s.URL, opaque(strings.Repeat("x", MaxBody+1)))
			r.ContentLength = MaxBody + 1
			return r
		}},
		"Expect": {Config{}, func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("x"))
			r.Header.Set("Expect", "100-continue")
			return r
		}},
		"an upgrade": {Config{}, func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, s.URL, nil)
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", "websocket")
			return r
		}},
		"another scheme": {Config{}, func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "ftp://example.test/x", nil)
			return r
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var rec recorder
			c.cfg.Fallback = &rec
			resp, err := New(c.cfg).RoundTrip(c.req())
			if err != nil || resp.StatusCode != 299 || rec.n.Load() != 1 {
				t.Fatalf("%v %v, fallback asked %d times", resp, err, rec.n.Load())
			}
		})
	}
	if n := s.accepted.Load(); n != 0 {
		t.Fatalf("the transport itself opened %d connections", n)
	}
}

func TestProxyErrorFailsTheRequest(t *testing.T) {
	tr := New(Config{Proxy: func(*http.Request) (*url.URL, error) { return nil, errors.New("bad proxy") }, Fallback: failing{}})
	req, _ := http.NewRequest(http.MethodPost, "http://example.test/", opaque("x"))
	req.ContentLength = 1
	if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "bad proxy") {
		t.Fatalf("err %v", err)
	}
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	s := newServer(t, echo, false)
	tr := s.transport(Config{IdleTimeout: 50 * time.Millisecond})
	if _, _, err := post(t.Context(), tr, s.URL, "x"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.open.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("an idle connection is still open 5 s after its idle timeout of 50 ms")
		}
		time.Sleep(5 * time.Millisecond)
	}

	tr = s.transport(Config{})
	if _, _, err := post(t.Context(), tr, s.URL, "x"); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	deadline = time.Now().Add(5 * time.Second)
	for s.open.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("CloseIdleConnections left a connection open")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Many callers at once, some cancelling mid-call: every call that is not cancelled gets its own
// answer.
func TestConcurrentCallsWithCancellations(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		echo(w, r)
	}, false)
	tr := s.transport(Config{MaxConnsPerHost: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				ctx, cancel := context.WithCancel(t.Context())
				cancelled := i%5 == 0
				if cancelled {
					time.AfterFunc(time.Duration(rand.IntN(2000))*time.Microsecond, cancel)
				}
				want := fmt.Sprintf("%d-%d", g, i)
				_, body, err := post(ctx, tr, s.URL, want)
				cancel()
				if err == nil && body != "echo:"+want || err != nil && !cancelled {
					t.Errorf("call %s: %q %v", want, body, err)
				}
			}
		})
	}
	wg.Wait()
}

// An answer's head is read up to MaxHeaderBytes; a larger one fails the call (and its
// connection), its body and the next call's answer are read in full.
func TestAnswerHeadIsBounded(t *testing.T) {
	body := strings.Repeat("b", 3*MaxHeaderBytes/2) // a body larger than the bound is fine
	u := rawServer(t, func(c net.Conn, req *http.Request) bool {
		if req.URL.Path == "/big" {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("h", MaxHeaderBytes)+"\r\nContent-Length: 0\r\n\r\n")
			return true
		}
		_, _ = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return true
	})
	tr := New(Config{Fallback: failing{}})
	for range 2 {
		_, got, err := post(t.Context(), tr, u+"/", "x")
		if err != nil || got != body {
			t.Fatalf("%d bytes, %v", len(got), err)
		}
	}
	if _, _, err := post(t.Context(), tr, u+"/big", "x"); err == nil || !errors.Is(err, errHeadTooLarge) {
		t.Fatalf("a head of more than %d bytes: %v", MaxHeaderBytes, err)
	}
	if _, got, err := post(t.Context(), tr, u+"/", "x"); err != nil || got != body {
		t.Fatalf("after it: %d bytes, %v", len(got), err)
	}
}

// rawServer serves HTTP/1.1 by hand: answer writes to c what is sent back for each request read
// on it (its body already read) and returns false to close the connection unanswered.
func rawServer(t *testing.T, answer func(c net.Conn, req *http.Request) bool) string {
	t.Helper()
	return "http://" + testinfra.ServeConns(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			if !answer(c, req) {
				return
			}
		}
	})
}

// postOnce sends body to u with no way to read it again (no GetBody) and returns the answer's
// body.
func postOnce(t *testing.T, tr *Transport, u, body string) (string, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, u, opaque(body))
	req.ContentLength = int64(len(body))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Over TLS too: stray answers a server sends after the one asked for (in the same write, in a
// record of their own right behind it, or a moment later) are not taken for the next answer,
// and a kept connection the server closed is not used.
func TestOverTLSStrayBytesAndClosedConnections(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mode := r.URL.Query().Get("stray")
		if mode == "" {
			_, _ = io.WriteString(w, "conn")
			return
		}
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		answer, stray := "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nconn", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray"
		switch mode {
		case "same-write":
			_, _ = io.WriteString(c, answer+stray)
		case "next-record":
			_, _ = io.WriteString(c, answer)
			_, _ = io.WriteString(c, stray)
		case "later":
			_, _ = io.WriteString(c, answer)
			time.Sleep(10 * time.Millisecond)
			_, _ = io.WriteString(c, stray)
		}
		time.Sleep(100 * time.Millisecond) // the connection stays open meanwhile
	}, true)
	tr := s.transport(Config{})
	for _, mode := range []string{"same-write", "next-record", "later"} {
		if _, body, err := post(t.Context(), tr, s.URL+"/?stray="+mode, "x"); err != nil || body != "conn" {
			t.Fatalf("%s: %q %v", mode, body, err)
		}
		time.Sleep(30 * time.Millisecond)
		if _, body, err := post(t.Context(), tr, s.URL, "x"); err != nil || body != "conn" {
			t.Fatalf("the call after stray bytes (%s): %q %v", mode, body, err)
		}
	}
	s.CloseClientConnections()
	time.Sleep(20 * time.Millisecond)
	b, err := postOnce(t, tr, s.URL, "y")
	if err != nil {
		t.Fatalf("a call after the server closed the kept TLS connection: %v", err)
	}
	if b != "conn" {
		t.Fatalf("%q", b)
	}
}

// A body never read to its end nor closed does not hold its connection's slot past the call's
// context: the next call to the host gets a connection.
func TestAbandonedBodyFreesItsSlotWithItsContext(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 64<<10))
	}, false)
	tr := s.transport(Config{MaxConnsPerHost: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if _, err := tr.RoundTrip(req); err != nil { // the body is left as it is
		t.Fatal(err)
	}
	next, cancelNext := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancelNext()
	if _, body, err := post(next, tr, s.URL, "x"); err != nil || len(body) != 64<<10 {
		t.Fatalf("the next call: %d bytes, %v", len(body), err)
	}
}
