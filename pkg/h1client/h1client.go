// Package h1client is an HTTP/1.1 client transport that sends a request and reads its answer
// on the caller's goroutine, over connections it keeps per host.
//
// net/http's Transport gives every connection a reading and a writing goroutine and hands each
// request and answer between them and the caller; over HTTP/2 it also writes a request's headers
// and body apart and hands every frame on. For the small calls the suite makes by the thousand
// (a Connect call to another service, a model server's answer, a reply to LINE), those hand-offs
// and the thread wake-ups behind them cost more than the call's own work: this transport writes
// a request in one system call and reads its answer where it is asked for. What it does not
// send itself (a proxy, a body of unknown length or above MaxBody, an upgrade, an Expect header,
// another scheme) goes to Fallback.
package h1client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// MaxHeaderBytes bounds an answer's head (status line and header fields), as net/http's
// transport does by default.
const MaxHeaderBytes = 10 << 20

// MaxBody is the largest request body the transport sends itself: it holds a body in memory
// so that the request leaves in one write; a larger one goes to Fallback.
const MaxBody = 1 << 20

// Config configures a Transport.
type Config struct {
	// TLS is the client configuration of https requests (nil: the system's roots). The
	// transport offers only HTTP/1.1 in the handshake and names the URL's host as the server.
	TLS *tls.Config
	// Proxy picks a proxy for a request, as http.Transport's does; a request it gives one goes
	// to Fallback. Nil: no proxy.
	Proxy func(*http.Request) (*url.URL, error)
	// Fallback sends the requests this transport does not (see the package comment). Nil: a
	// copy of http.DefaultTransport with this TLS configuration and proxy.
	Fallback http.RoundTripper
	// MaxConnsPerHost bounds the connections to one host, idle or busy; a request beyond it
	// waits for one to be free. 0 (or less): no bound.
	MaxConnsPerHost int
	// MaxIdlePerHost is how many idle connections to one host are kept (0 or less: 64; at most
	// MaxConnsPerHost).
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle that long (0 or less: 30 s). Keep it below the
	// servers'.
	IdleTimeout time.Duration
	// DialTimeout bounds a connection's dial and TLS handshake (0 or less: 10 s).
	DialTimeout time.Duration
	// RetryUnanswered sends any request once more when a kept connection ended under it
	// without a byte of answer (see RoundTrip); false: only what net/http's transport would
	// send again, a GET, HEAD, OPTIONS or TRACE, or a request with an Idempotency-Key.
	RetryUnanswered bool
}

// Transport is an http.RoundTripper; see the package comment. It is safe for concurrent use.
type Transport struct {
	cfg   Config
	mu    sync.Mutex
	hosts map[string]*host
	// wrap, when set (by tests), wraps every connection dialled.
	wrap func(net.Conn) net.Conn
}

// New returns a transport with cfg.
func New(cfg Config) *Transport {
	if cfg.Fallback == nil {
		f := http.DefaultTransport.(*http.Transport).Clone()
		f.TLSClientConfig = cfg.TLS
		f.Proxy = cfg.Proxy
		cfg.Fallback = f
	}
	cfg.MaxConnsPerHost = max(cfg.MaxConnsPerHost, 0)
	if cfg.MaxIdlePerHost <= 0 {
		cfg.MaxIdlePerHost = 64
	}
	if cfg.MaxConnsPerHost > 0 && cfg.MaxIdlePerHost > cfg.MaxConnsPerHost {
		cfg.MaxIdlePerHost = cfg.MaxConnsPerHost
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	return &Transport{cfg: cfg, hosts: map[string]*host{}}
}

// host holds the connections to one scheme, host and port.
type host struct {
	addr string
	tls  *tls.Config // nil for http
	// idle holds the connections ready for a request; a connection is in it or in use, never
	// both.
	idle chan *conn
	// slots holds a token per open connection when their number is bounded (nil otherwise).
	slots chan struct{}

	sweepMu    sync.Mutex
	sweepArmed bool
}

// conn is one kept connection.
type conn struct {
	nc        net.Conn
	lr        *limitedReader // under br: bounds what the head of an answer may read
	br        *bufio.Reader
	h         *host
	tlsState  *tls.ConnectionState
	idleSince time.Time
	closed    atomic.Bool
}

func (c *conn) close() {
	if c.closed.CompareAndSwap(false, true) {
		_ = c.nc.Close()
		if c.h.slots != nil {
			<-c.h.slots
		}
	}
}

// abort makes a read or write blocked on the connection return at once.
func (c *conn) abort() { _ = c.nc.SetDeadline(time.Unix(1, 0)) }

// alive tells whether a kept connection may carry a request: the server has neither closed it
// nor sent anything on it since its last answer (a 408 on an idle connection, a stray answer),
// which would be taken for the next answer. Over TLS, records the TLS layer already read from
// the socket are looked at by reading through it without waiting; then the socket itself.
func (c *conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.tlsState != nil {
		if err := c.nc.SetReadDeadline(time.Unix(1, 0)); err != nil {
			return false
		}
		_, err := c.br.Peek(1)
		if !errors.Is(err, os.ErrDeadlineExceeded) || c.nc.SetReadDeadline(time.Time{}) != nil {
			return false
		}
	}
	return socketAlive(c.nc)
}

// CloseIdleConnections closes the connections not in use.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	hs := make([]*host, 0, len(t.hosts))
	for _, h := range t.hosts {
		hs = append(hs, h)
	}
	t.mu.Unlock()
	for _, h := range hs {
		for {
			select {
			case c := <-h.idle:
				c.close()
				continue
			default:
			}
			break
		}
	}
	if f, ok := t.cfg.Fallback.(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// RoundTrip sends req and returns its answer, as http.RoundTripper asks. A kept connection is
// looked at before it is used: one the server closed, or on which it sent something unasked,
// is closed and another taken. A request written on a kept connection that the server closed
// without a byte of answer (its idle timeout or a shutdown closing it just then) is sent once
// more, on a new connection, when RetryUnanswered or the request allows it and its body can be
// had again (GetBody) or it has none; a request on a new connection is never sent twice, as the
// server may have acted on it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	h, ok, err := t.hostFor(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	if !ok {
		return t.cfg.Fallback.RoundTrip(req)
	}
	resp, again, err := t.send(req, h, false)
	if !again || !(t.cfg.RetryUnanswered || idempotent(req)) {
		return resp, err
	}
	retry := req
	if hasBody(req) {
		if req.GetBody == nil {
			return nil, err
		}
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		retry = req.Clone(req.Context())
		retry.Body = body
	}
	resp, _, err = t.send(retry, h, true)
	return resp, err
}

// idempotent tells whether net/http's transport would send req again after a kept connection
// ended under it unanswered.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// hostFor tells whether the transport sends req itself, and to which host. A request net/http's
// transport would refuse (a method or header field that is not valid on the wire) is refused.
func (t *Transport) hostFor(req *http.Request) (*host, bool, error) {
	u := req.URL
	if u == nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || req.Method == http.MethodConnect || !ascii(u.Host) {
		return nil, false, nil
	}
	if err := valid(req); err != nil {
		return nil, false, err
	}
	if hasBody(req) && (req.ContentLength <= 0 || req.ContentLength > MaxBody) {
		return nil, false, nil
	}
	if len(req.Trailer) > 0 || req.Header.Get("Expect") != "" || req.Header.Get("Upgrade") != "" || len(req.TransferEncoding) > 0 {
		return nil, false, nil
	}
	if t.cfg.Proxy != nil {
		p, err := t.cfg.Proxy(req)
		if err != nil {
			return nil, false, err
		}
		if p != nil {
			return nil, false, nil
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	key := u.Scheme + "://" + addr
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.hosts[key]; h != nil {
		return h, true, nil
	}
	h := &host{addr: addr, idle: make(chan *conn, t.cfg.MaxIdlePerHost)}
	if t.cfg.MaxConnsPerHost > 0 {
		h.slots = make(chan struct{}, t.cfg.MaxConnsPerHost)
	}
	if u.Scheme == "https" {
		c := &tls.Config{}
		if t.cfg.TLS != nil {
			c = t.cfg.TLS.Clone()
		}
		c.NextProtos = []string{"http/1.1"}
		if c.ServerName == "" {
			c.ServerName = u.Hostname()
		}
		h.tls = c
	}
	t.hosts[key] = h
	return h, true, nil
}

// ascii tells whether s is plain ASCII; a host of other characters (to be dialled in punycode)
// goes to the fallback, which converts it.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// valid checks req's method and header fields as net/http's transport does.
func valid(req *http.Request) error {
	if req.Method != "" && !httpguts.ValidHeaderFieldName(req.Method) {
		return fmt.Errorf("h1client: invalid method %q", req.Method)
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("h1client: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("h1client: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

func hasBody(req *http.Request) bool { return req.Body != nil && req.Body != http.NoBody }

func closeBody(req *http.Request) {
	if hasBody(req) {
		_ = req.Body.Close()
	}
}

// send writes req on a connection of h (a new one when fresh) and reads the answer's head.
// again reports a kept connection that ended without a byte of answer.
func (t *Transport) send(req *http.Request, h *host, fresh bool) (resp *http.Response, again bool, err error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, false, err
	}
	// The request is written whole into memory first and leaves in one write: http.Request.Write
	// flushes the head on its own before a body it does not know to be in memory (a Connect
	// call's), and a write cut short by a closed connection is then known to be unread.
	buf := bufs.Get().(*bytes.Buffer)
	defer putBuf(buf)
	if err := req.Write(buf); err != nil {
		return nil, false, fmt.Errorf("write request: %w", err)
	}
	c, reused, err := t.get(ctx, h, fresh)
	if err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		t.put(c)
		return nil, false, err
	}
	// The end of ctx closes the connection, also under an answer's body that is never read to
	// its end or closed: its slot is not held past the call's deadline.
	stop := context.AfterFunc(ctx, func() {
		c.abort()
		c.close()
	})
	fail := func(err error, unanswered bool) (*http.Response, bool, error) {
		stop()
		c.close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, cerr
		}
		return nil, reused && unanswered, err
	}
	if _, err := c.nc.Write(buf.Bytes()); err != nil {
		return fail(fmt.Errorf("write request: %w", err), closedByPeer(err))
	}
	c.lr.n = MaxHeaderBytes
	if _, err := c.br.Peek(1); err != nil {
		return fail(fmt.Errorf("read response: %w", err), closedByPeer(err))
	}
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			return fail(fmt.Errorf("read response: %w", err), false)
		}
		// An informational answer (100 Continue, 103 Early Hints) precedes the real one.
		if resp.StatusCode < 100 || resp.StatusCode >= 200 {
			break
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return fail(errors.New("read response: 101 Switching Protocols to a request that asked for no upgrade"), false)
		}
	}
	c.lr.n = math.MaxInt64
	resp.TLS = c.tlsState
	b := &body{rc: resp.Body, c: c, t: t, stop: stop, ctx: ctx, keep: !resp.Close && !req.Close}
	if resp.Body == http.NoBody {
		b.finish(true)
		return resp, false, nil
	}
	resp.Body = b
	return resp, false, nil
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBuf keeps buf for another request unless it grew beyond what a usual request needs.
func putBuf(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return
	}
	buf.Reset()
	bufs.Put(buf)
}

// closedByPeer tells whether err is a connection that ended under a request written on it: end
// of stream where the answer's first byte was to come, or a reset or broken pipe.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// get takes an idle connection of h, or opens one (fresh: always opens one).
func (t *Transport) get(ctx context.Context, h *host, fresh bool) (*conn, bool, error) {
	for {
		if !fresh {
			select {
			case c := <-h.idle:
				if t.stale(c) || !c.alive() {
					c.close()
					continue
				}
				return c, true, nil
			default:
			}
		}
		if h.slots == nil {
			c, err := t.dial(ctx, h)
			return c, false, err
		}
		var idle <-chan *conn
		if !fresh {
			idle = h.idle
		}
		select {
		case c := <-idle:
			if t.stale(c) || !c.alive() {
				c.close()
				continue
			}
			return c, true, nil
		case h.slots <- struct{}{}:
			c, err := t.dial(ctx, h)
			if err != nil {
				<-h.slots
			}
			return c, false, err
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

func (t *Transport) stale(c *conn) bool { return time.Since(c.idleSince) >= t.cfg.IdleTimeout }

// dial opens a connection to h; its slot, if any, is already taken.
func (t *Transport) dial(ctx context.Context, h *host) (*conn, error) {
	d := &net.Dialer{Timeout: t.cfg.DialTimeout, KeepAlive: 30 * time.Second}
	var nc net.Conn
	var err error
	var state *tls.ConnectionState
	if h.tls != nil {
		tc, derr := (&tls.Dialer{NetDialer: d, Config: h.tls}).DialContext(ctx, "tcp", h.addr)
		err = derr
		if derr == nil {
			nc = tc
			s := tc.(*tls.Conn).ConnectionState()
			state = &s
		}
	} else {
		nc, err = d.DialContext(ctx, "tcp", h.addr)
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	if t.wrap != nil {
		nc = t.wrap(nc)
	}
	lr := &limitedReader{r: nc, n: math.MaxInt64}
	return &conn{nc: nc, lr: lr, br: bufio.NewReader(lr), h: h, tlsState: state}, nil
}

// limitedReader reads from r until n bytes were read, then fails.
type limitedReader struct {
	r io.Reader
	n int64
}

var errHeadTooLarge = fmt.Errorf("read response: head larger than %d bytes", MaxHeaderBytes)

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// put keeps c for the next request, or closes it when h keeps enough.
func (t *Transport) put(c *conn) {
	c.idleSince = time.Now()
	select {
	case c.h.idle <- c:
		t.armSweep(c.h)
	default:
		c.close()
	}
}

// armSweep makes sure idle connections of h are closed once idle for IdleTimeout, also when no
// request comes to find them.
func (t *Transport) armSweep(h *host) {
	h.sweepMu.Lock()
	defer h.sweepMu.Unlock()
	if h.sweepArmed {
		return
	}
	h.sweepArmed = true
	time.AfterFunc(t.cfg.IdleTimeout, func() { t.sweep(h) })
}

func (t *Transport) sweep(h *host) {
	for range len(h.idle) {
		var c *conn
		select {
		case c = <-h.idle:
		default:
		}
		if c == nil {
			break
		}
		if t.stale(c) {
			c.close()
			continue
		}
		select {
		case h.idle <- c:
		default:
			c.close()
		}
	}
	h.sweepMu.Lock()
	h.sweepArmed = false
	h.sweepMu.Unlock()
	if len(h.idle) > 0 {
		t.armSweep(h)
	}
}

// body is an answer's body; its end gives the connection back (or closes it).
type body struct {
	rc   io.ReadCloser
	c    *conn
	t    *Transport
	stop func() bool
	ctx  context.Context
	keep bool
	// state: 0 being read, 1 read to its end, 2 closed before its end or failed.
	state atomic.Int32
}

func (b *body) Read(p []byte) (int, error) {
	switch b.state.Load() {
	case 1:
		return 0, io.EOF
	case 2:
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.finish(true)
	case err != nil:
		b.finish(false)
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr
		}
	}
	return n, err
}

// Close ends the body; read to its end or not, the connection is not read again by it.
func (b *body) Close() error {
	b.finish(false)
	return nil
}

// finish gives the connection back when the body was read to its end and the connection may
// carry another request, and closes it otherwise. It acts once.
func (b *body) finish(ok bool) {
	state := int32(2)
	if ok {
		state = 1
	}
	if !b.state.CompareAndSwap(0, state) {
		return
	}
	// Bytes already read beyond the answer were sent unasked: they would be taken for the next
	// request's answer.
	if b.stop() && ok && b.keep && b.c.br.Buffered() == 0 {
		b.t.put(b.c)
		return
	}
	b.c.close()
}
