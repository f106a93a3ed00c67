package rpcserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/deepstack"
)

// Limits are the timeouts and caps of every listener of the suite.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's whole body: a client that trickles it is cut off.
	BodyTimeout time.Duration
	// WriteTimeout bounds a response (long-lived streams excepted, see Server.LongLived).
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections that carry no request.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request headers.
	MaxHeaderBytes int
	// MaxConns caps the connections open at once on one listener; more wait to be accepted.
	MaxConns int
}

// DefaultLimits are the defaults of config.HTTP.
func DefaultLimits() Limits {
	d := config.DefaultHTTP()
	return Limits{ReadHeaderTimeout: d.ReadHeaderTimeout, BodyTimeout: d.BodyTimeout, WriteTimeout: d.WriteTimeout,
		IdleTimeout: d.IdleTimeout, MaxHeaderBytes: d.MaxHeaderBytes, MaxConns: d.MaxConns}
}

// LimitsFrom takes the limits from the common `http:` section.
func LimitsFrom(c config.Common) Limits {
	h := c.HTTP
	return Limits{ReadHeaderTimeout: h.ReadHeaderTimeout, BodyTimeout: h.BodyTimeout, WriteTimeout: h.WriteTimeout,
		IdleTimeout: h.IdleTimeout, MaxHeaderBytes: h.MaxHeaderBytes, MaxConns: h.MaxConns}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	orDefault(&l.BodyTimeout, d.BodyTimeout)
	orDefault(&l.WriteTimeout, d.WriteTimeout)
	orDefault(&l.IdleTimeout, d.IdleTimeout)
	orDefault(&l.MaxHeaderBytes, d.MaxHeaderBytes)
	orDefault(&l.MaxConns, d.MaxConns)
	return l
}

// orDefault replaces a value that is not positive (unset) with the default.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Validate checks that no limit is negative.
func (l Limits) Validate() error {
	if l.ReadHeaderTimeout < 0 || l.BodyTimeout < 0 || l.WriteTimeout < 0 || l.IdleTimeout < 0 || l.MaxHeaderBytes < 0 || l.MaxConns < 0 {
		return errors.New("rpcserver: limits must not be negative")
	}
	return nil
}

// httpServer builds the http.Server of one listener with the limits.
func (s *Server) httpServer(ctx context.Context, h http.Handler, h2c bool) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	if h2c {
		protocols.SetUnencryptedHTTP2(true)
	}
	l := s.cfg.Limits
	return &http.Server{
		Handler:           s.listenerHandler(h, h2c),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		HTTP2:             &http.HTTP2Config{MaxReadFrameSize: 1 << 20, MaxConcurrentStreams: 250},
		Protocols:         &protocols,
		ErrorLog:          slog.NewLogLogger(s.tel.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnState:         s.inflight.connState,
	}
}

// listenerHandler is what a listener serves, and what is served in process (InProcess): h,
// drained on shutdown (inflight), its goroutine's stack grown first when reserve is set.
func (s *Server) listenerHandler(h http.Handler, reserve bool) http.Handler {
	handler := s.inflight.wrap(h)
	if reserve {
		handler = reserveStack(handler)
	}
	return handler
}

// reserveStack grows the stack of the goroutine a request on an internal listener is served on
// (one per HTTP/2 stream, one per HTTP/1.1 connection) to its working size before the request
// goes down the middleware, interceptors and handler (and, for most calls, a client's
// interceptors to the next service): its stack would otherwise be copied several times per call
// as the chain deepens. A call served in process runs on its caller's goroutine, whose stack its
// caller grew, so it goes without.
func reserveStack(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deepstack.Reserve()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) limitListener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, s.cfg.Limits.MaxConns)
}

// perClientConns caps the connections one client address holds open on the public listener,
// so one host cannot take every slot of max_conns (slowloris); more are closed at once.
const perClientConns = 64

type perClientListener struct {
	net.Listener
	max    int
	mu     sync.Mutex
	counts map[string]int
}

func limitPerClient(ln net.Listener, max int) net.Listener {
	return &perClientListener{Listener: ln, max: max, counts: map[string]int{}}
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		l.mu.Lock()
		if l.counts[host] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.counts[host]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.counts[host]--; l.counts[host] <= 0 {
				delete(l.counts, host)
			}
		}}, nil
	}
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// LongLived marks paths (server streams such as Watch) whose responses may outlast WriteTimeout.
func (s *Server) LongLived(paths ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.longLived == nil {
		s.longLived = map[string]bool{}
	}
	for _, p := range paths {
		s.longLived[p] = true
	}
}

func (s *Server) isLongLived(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.longLived[path]
}

// limitTime gives every request a deadline for its body and one for its response. The body
// deadline is lifted once the body has been read, so a slow handler is not cut off by it; a
// client that sends its body a byte at a time is.
func (s *Server) limitTime(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, inProcess := w.(*bufferedResponse); inProcess {
			// An in-process call has no connection to put a deadline on: its body is in memory
			// and its answer is buffered; the caller's context bounds it.
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		now := time.Now()
		if !s.isLongLived(r.URL.Path) {
			_ = rc.SetWriteDeadline(now.Add(s.cfg.Limits.WriteTimeout))
		}
		if r.Body != nil && r.Body != http.NoBody {
			if err := rc.SetReadDeadline(now.Add(s.cfg.Limits.BodyTimeout)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body has been read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(func() { _ = b.rc.SetReadDeadline(time.Time{}) })
	}
	return n, err
}
