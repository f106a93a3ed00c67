package rpcserver

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/picoclaw-suite/picoclaw/pkg/h1client"
)

// InProcess marks ln, a service's internal listener, as reachable in process: while the
// service runs, a unary Connect call that a client of this process (NewHTTPClient) makes to
// ln's address is served by calling the service's handler on the caller's goroutine, with no
// connection, framing or copy in between. The embedded suite uses it for the calls between
// its components. The handler is the one the listener serves (listenerHandler: authentication
// of the caller, limits, metrics, tracing, drain on shutdown; only the stack reserve is left out,
// the call running on its caller's goroutine), the request carries the same headers and body,
// and the handler's context is the server's, cancelled when the caller's ends — what it sees
// over the network. Streams, the gRPC protocol and anything else go over ln as before.
func InProcess(ln net.Listener) net.Listener { return inProcessListener{ln} }

type inProcessListener struct{ net.Listener }

// inProcessHandler is a running service's internal handler, served in process.
type inProcessHandler struct {
	h      http.Handler
	base   context.Context // the server's base context (values, no cancellation)
	closed atomic.Bool     // the service stopped serving: calls go to the network
	// calls counts the calls in flight with the service's other requests, so its drain waits
	// for them; a call is counted before it checks closed (enter), so none starts after it.
	calls *inflight
}

var inProcess sync.Map // listener address (host:port) → *inProcessHandler

// serveInProcess registers h for addr until the returned function is called (at the start of
// the service's shutdown: later calls go to the closed listener, as over the network).
func serveInProcess(addr string, h http.Handler, base context.Context, calls *inflight) func() {
	e := &inProcessHandler{h: h, base: base, calls: calls}
	inProcess.Store(addr, e)
	return func() {
		e.closed.Store(true)
		inProcess.CompareAndDelete(addr, e)
	}
}

// inProcessTransport serves the requests it can in process and sends the others on: a unary
// call over HTTP/1.1 (h1client, which also sends a call once more when a kept connection was
// closed under it unanswered), anything else over h2c.
type inProcessTransport struct {
	unary *h1client.Transport
	next  *http.Transport
}

func (t *inProcessTransport) CloseIdleConnections() {
	t.unary.CloseIdleConnections()
	t.next.CloseIdleConnections()
}

func (t *inProcessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if resp, served, err := serveLocal(req); served {
		return resp, err
	}
	if inProcessable(req) {
		return t.unary.RoundTrip(req)
	}
	return t.next.RoundTrip(req)
}

// serveLocal serves req in process when a service of this process serves its address in process
// and req is a call that can be served so; served is false when it goes to the network.
func serveLocal(req *http.Request) (resp *http.Response, served bool, err error) {
	v, ok := inProcess.Load(req.URL.Host)
	if !ok || !inProcessable(req) {
		return nil, false, nil
	}
	e := v.(*inProcessHandler)
	if !e.enter() {
		return nil, false, nil
	}
	defer e.calls.done()
	resp, err = e.serve(req)
	return resp, true, err
}

// enter counts a call in flight unless the service stopped serving in process. The count comes
// first: a stop that sets closed and then waits for the count either sees this call or is seen
// by it.
func (e *inProcessHandler) enter() bool {
	e.calls.n.Add(1)
	if e.closed.Load() {
		e.calls.done()
		return false
	}
	return true
}

// inProcessable is a unary Connect call: a POST whose whole answer is one body (no stream, no
// trailers), so it can be served on the caller's goroutine and buffered.
func inProcessable(req *http.Request) bool {
	if req.Method != http.MethodPost {
		return false
	}
	ct := req.Header.Get("Content-Type")
	return ct == "application/proto" || ct == "application/json" || strings.HasPrefix(ct, "application/json;")
}

func (e *inProcessHandler) serve(req *http.Request) (resp *http.Response, err error) {
	body := req.Body
	if body == nil {
		body = http.NoBody
	}
	defer body.Close()
	ctx, cancel := context.WithCancel(e.base)
	defer cancel()
	stop := context.AfterFunc(req.Context(), cancel)
	defer stop()
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	// What the network client would refuse to send is refused here too, and the keys reach the
	// handler in the canonical form a server parses them into.
	header, err := wireHeader(req.Header)
	if err != nil {
		return nil, fmt.Errorf("in-process call %s: %w", req.URL.Path, err)
	}
	if !validHeaderValue(host) || strings.ContainsAny(host, " /?#@") {
		return nil, fmt.Errorf("in-process call %s: invalid Host header", req.URL.Path)
	}
	sreq := (&http.Request{
		Method:        req.Method,
		URL:           &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          body,
		ContentLength: req.ContentLength,
		Host:          host,
		RemoteAddr:    "127.0.0.1:0",
		RequestURI:    req.URL.RequestURI(),
	}).WithContext(ctx)
	w := &bufferedResponse{header: http.Header{}}
	defer func() {
		// As net/http does: a panicking handler fails its request, not the process.
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				log.Printf("rpcserver: panic serving in-process %s: %v\n%s", req.URL.Path, p, debug.Stack())
			}
			resp, err = nil, fmt.Errorf("in-process call %s: the handler failed", req.URL.Path)
		}
	}()
	e.h.ServeHTTP(w, sreq)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return w.response(req), nil
}

// wireHeader is a copy of h as a server receives it from the network client: every field name
// and value valid (as net/http's transport checks them before sending), keys canonical, values of
// the same key in order. The handler never shares the caller's map: a caller may reuse its
// request, and what a handler sets must not reach it.
func wireHeader(h http.Header) (http.Header, error) {
	canonical := true
	for k, vs := range h {
		if !validHeaderName(k) {
			return nil, fmt.Errorf("invalid header field name %q", k)
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return nil, fmt.Errorf("invalid header field value for %q", k)
			}
		}
		canonical = canonical && http.CanonicalHeaderKey(k) == k
	}
	if canonical && h != nil {
		// One map and one slice for all the values (http.Header.Clone).
		return h.Clone(), nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], vs...)
	}
	return out, nil
}

// validHeaderName is a field name as RFC 9110 defines it: one or more token characters.
// (golang.org/x/net/http/httpguts has the same check, but links Unicode tables for its host
// checks into the binary.)
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 0x80 || !tokenChar[c] {
			return false
		}
	}
	return true
}

// validHeaderValue has no control character but horizontal tab (RFC 9110 field-value; obsolete
// line folding is refused, as net/http's client refuses it).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// tokenChar marks the ASCII characters of an RFC 9110 token.
var tokenChar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// bufferedResponse is the http.ResponseWriter of an in-process call.
type bufferedResponse struct {
	header http.Header
	sent   http.Header // the header as it was when the status was written
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(code int) {
	if w.status != 0 || (code >= 100 && code < 200) {
		return
	}
	w.status = code
	w.sent = w.header.Clone()
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.body.Write(p)
}

// Flush makes the writer an http.Flusher, as every HTTP/2 response writer is.
func (w *bufferedResponse) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
}

func (w *bufferedResponse) response(req *http.Request) *http.Response {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	h := w.sent
	if h.Get("Content-Type") == "" && w.body.Len() > 0 {
		h.Set("Content-Type", http.DetectContentType(w.body.Bytes()))
	}
	// Trailers the handler declared, or set with the http.TrailerPrefix, as net/http sends them.
	var trailer http.Header
	for _, k := range h.Values("Trailer") {
		for _, name := range strings.Split(k, ",") {
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			if v, ok := w.header[name]; ok {
				trailer = addTrailer(trailer, name, v)
			}
		}
	}
	for k, v := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			trailer = addTrailer(trailer, http.CanonicalHeaderKey(name), v)
		}
	}
	h.Del("Trailer")
	n := int64(w.body.Len())
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Trailer:       trailer,
		Body:          readCloser{bytes.NewReader(w.body.Bytes())},
		ContentLength: n,
		Request:       req,
	}
}

func addTrailer(t http.Header, k string, v []string) http.Header {
	if t == nil {
		t = http.Header{}
	}
	t[k] = append(t[k], v...)
	return t
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
