package rpcserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// httpInstrumentation is the instrumentation scope of the plain HTTP routes' server spans.
const httpInstrumentation = "github.com/picoclaw-suite/picoclaw/pkg/rpcserver/http"

// traceHTTP gives every request to h a server span by the HTTP semantic conventions: named
// "<METHOD> <route>" (the route pattern the router matched; name when there is none), with the request's method,
// scheme, address, peer, user agent, path, protocol and route, then the response's status and
// body sizes; a 5xx status marks the span failed. Trace context is taken from the request's
// headers through prop (the public edge passes noPropagation and starts new traces).
//
// The response writer h sees is wrapped only to record the status and the bytes written; it
// flushes and unwraps (http.ResponseController) to the writer underneath.
//
// Where nothing records spans (telemetry.Records) the request gets its span, carrying the trace
// context on, without the attributes and the wrapping nobody would read.
func traceHTTP(name string, h http.Handler, tp trace.TracerProvider, prop propagation.TextMapPropagator) http.Handler {
	tr := tp.Tracer(httpInstrumentation)
	if !telemetry.Records(tp) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
			defer span.End()
			serveWith(ctx, h, w, r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tr.Start(ctx, httpSpanName(r, name), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(httpRequestAttrs(r)...))
		defer span.End()

		var body *countingBody
		if r.Body != nil && r.Body != http.NoBody {
			orig, prev := r, r.Body
			body = &countingBody{ReadCloser: r.Body}
			r.Body = body
			// net/http looks at the body it handed out after the handler returns.
			defer func() { orig.Body = prev }()
		}
		rec := &traceRecorder{ResponseWriter: w, status: http.StatusOK}
		if rr := serveWith(ctx, h, rec, r); rr.Pattern != "" {
			span.SetName(httpSpanName(rr, name))
		}
		attrs := make([]attribute.KeyValue, 0, 3)
		if body != nil && body.n > 0 {
			attrs = append(attrs, semconv.HTTPRequestBodySize(int(body.n)))
		}
		if rec.written > 0 {
			attrs = append(attrs, semconv.HTTPResponseBodySize(int(rec.written)))
		}
		attrs = append(attrs, semconv.HTTPResponseStatusCode(rec.status))
		span.SetAttributes(attrs...)
		switch {
		case rec.status < 100 || rec.status >= 600:
			span.SetStatus(codes.Error, fmt.Sprintf("Invalid HTTP status code %d", rec.status))
		case rec.status >= 500:
			span.SetStatus(codes.Error, "")
		}
	})
}

// serveWith serves r to h with ctx and answers the request h was given (its Pattern is the route
// the router matched).
func serveWith(ctx context.Context, h http.Handler, w http.ResponseWriter, r *http.Request) *http.Request {
	rr := r.WithContext(ctx)
	defer func() {
		// net/http removes the temporary files of a parsed multipart form it finds on the
		// request it passed in.
		if rr.MultipartForm != nil {
			r.MultipartForm = rr.MultipartForm
		}
	}()
	h.ServeHTTP(w, rr)
	return rr
}

var httpMethods = map[string]attribute.KeyValue{
	http.MethodConnect: semconv.HTTPRequestMethodConnect,
	http.MethodDelete:  semconv.HTTPRequestMethodDelete,
	http.MethodGet:     semconv.HTTPRequestMethodGet,
	http.MethodHead:    semconv.HTTPRequestMethodHead,
	http.MethodOptions: semconv.HTTPRequestMethodOptions,
	http.MethodPatch:   semconv.HTTPRequestMethodPatch,
	http.MethodPost:    semconv.HTTPRequestMethodPost,
	http.MethodPut:     semconv.HTTPRequestMethodPut,
	http.MethodTrace:   semconv.HTTPRequestMethodTrace,
}

// httpSpanName is "<METHOD> <route>" (a method outside the standard set is named HTTP), or
// name when no route matched.
func httpSpanName(r *http.Request, name string) string {
	route := httpRoute(r.Pattern)
	if route == "" && name != "" {
		return name
	}
	method := strings.ToUpper(r.Method)
	if _, ok := httpMethods[method]; !ok {
		method = "HTTP"
	}
	if route != "" {
		return method + " " + route
	}
	return method
}

// httpRoute is the path part of a route pattern ("GET /v1/x" and "/v1/x" both give "/v1/x").
func httpRoute(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return ""
}

func httpRequestAttrs(r *http.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 12)
	host, port := splitHostPort(r.Host)
	attrs = append(attrs, semconv.ServerAddress(host))
	switch method, ok := httpMethods[r.Method]; {
	case ok:
		attrs = append(attrs, method)
	case r.Method == "":
		attrs = append(attrs, semconv.HTTPRequestMethodOther)
	default:
		if m, ok := httpMethods[strings.ToUpper(r.Method)]; ok {
			attrs = append(attrs, m)
		} else {
			attrs = append(attrs, semconv.HTTPRequestMethodOther)
		}
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
	}
	if r.TLS != nil {
		attrs = append(attrs, semconv.URLScheme("https"))
		if port == 443 {
			port = -1
		}
	} else {
		attrs = append(attrs, semconv.URLScheme("http"))
		if port == 80 {
			port = -1
		}
	}
	if port > 0 {
		attrs = append(attrs, semconv.ServerPort(port))
	}
	peer, peerPort := splitHostPort(r.RemoteAddr)
	if peer != "" {
		attrs = append(attrs, semconv.NetworkPeerAddress(peer))
		if peerPort > 0 {
			attrs = append(attrs, semconv.NetworkPeerPort(peerPort))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	client, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
	if client == "" {
		client = peer
	}
	if client != "" {
		attrs = append(attrs, semconv.ClientAddress(client))
	}
	if r.URL != nil && r.URL.Path != "" {
		attrs = append(attrs, semconv.URLPath(r.URL.Path))
	}
	name, version, _ := strings.Cut(r.Proto, "/")
	if name = strings.ToLower(name); name != "" && name != "http" {
		attrs = append(attrs, semconv.NetworkProtocolName(name))
	}
	if version != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	if route := httpRoute(r.Pattern); route != "" {
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	return attrs
}

// splitHostPort splits "host:port", "[v6]:port" or a bare host; port is -1 when absent or
// not a port number.
func splitHostPort(hostport string) (string, int) {
	if !strings.HasPrefix(hostport, "[") && !strings.Contains(hostport, ":") {
		return hostport, -1
	}
	if strings.HasPrefix(hostport, "[") {
		end := strings.LastIndexByte(hostport, ']')
		if end < 0 {
			return "", -1
		}
		if !strings.Contains(hostport[end:], ":") {
			return hostport[1:end], -1
		}
	}
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, -1
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return host, -1
	}
	return host, int(port)
}

// countingBody counts the request body bytes the handler read.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// traceRecorder records the response status (the first final one; 1xx informational headers
// other than 101 do not count) and the bytes written.
type traceRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	written     int64
}

func (w *traceRecorder) WriteHeader(code int) {
	if !w.wroteHeader && (code < 100 || code > 199 || code == http.StatusSwitchingProtocols) {
		w.wroteHeader, w.status = true, code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *traceRecorder) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *traceRecorder) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *traceRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
