// Package outbound is the HTTP client for the APIs outside the suite (LINE, Slack, the model
// providers): HTTP/1.1 on kept connections, sent and answered on the caller's goroutine
// (h1client), with a pool sized for concurrent calls to one host, so a burst reuses its
// connections instead of opening (and leaving in TIME_WAIT) one per call — net/http's default
// keeps only two idle connections per host.
package outbound

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/h1client"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// IdlePerHost is how many connections to one host are kept for reuse, and the most open at
// once.
const IdlePerHost = 128

const idleTimeout = 30 * time.Second

// Option configures a client.
type Option func(*options)

type options struct{ tp trace.TracerProvider }

// Traced makes every request a client span on tp (OpenTelemetry HTTP conventions:
// http.request.method, server.address, url.full, http.response.status_code), named
// "<METHOD> <host>". The suite's trace context is not sent to the outside API.
// Nothing is wrapped when tp records nothing (no exporter): the tracing would cost each request
// and leave no trace.
func Traced(tp trace.TracerProvider) Option {
	return func(o *options) {
		if telemetry.Records(tp) {
			o.tp = tp
		}
	}
}

// Client returns a client whose every request, up to the end of its answer's body, is bounded
// by timeout (0: no bound; the caller's context decides).
func Client(timeout time.Duration, opts ...Option) *http.Client {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	std := http.DefaultTransport.(*http.Transport).Clone()
	std.MaxIdleConns = 4 * IdlePerHost
	std.MaxIdleConnsPerHost = IdlePerHost
	// An idle connection (its TLS state and buffers) is closed after 30 s: a burst reuses the
	// pool, a quiet suite holds none of it a minute later.
	std.IdleConnTimeout = idleTimeout
	// A request goes over HTTP/1.1 on a kept connection, written and answered on the caller's
	// goroutine (h1client); one through a proxy, or with a body of unknown length, goes through
	// net/http's transport (HTTP/2 where the server offers it).
	// The connections to one host are bounded by the ones kept: a burst larger than the pool
	// waits for a connection rather than opening one (a TLS handshake) that would be closed
	// right after its call.
	t := h1client.New(h1client.Config{
		Proxy:           http.ProxyFromEnvironment,
		Fallback:        std,
		MaxConnsPerHost: IdlePerHost,
		MaxIdlePerHost:  IdlePerHost,
		IdleTimeout:     idleTimeout,
	})
	var rt http.RoundTripper = t
	if o.tp != nil {
		rt = otelhttp.NewTransport(redactURL{t}, otelhttp.WithTracerProvider(o.tp),
			otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator()),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Hostname() }))
	}
	if timeout > 0 {
		rt = bounded{next: rt, timeout: timeout}
	}
	return &http.Client{Transport: rt}
}

// bounded gives each request a deadline of timeout, from its start to the end of its answer's
// body. http.Client's own Timeout would do the same with a goroutine and a timer per request
// for any transport but net/http's, which a body never closed (an SDK that reads an error
// answer to its end and drops it) keeps alive until the timeout.
type bounded struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (b bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), b.timeout)
	resp, err := b.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		cancel()
		return resp, nil
	}
	resp.Body = &cancelAtEnd{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func (b bounded) CloseIdleConnections() {
	if c, ok := b.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// cancelAtEnd releases a request's deadline when its body is read to the end or closed.
type cancelAtEnd struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelAtEnd) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if err == io.EOF {
		c.cancel()
	}
	return n, err
}

func (c *cancelAtEnd) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// redactURL runs under the HTTP span and masks its url.full: a query may carry a key (`?key=…`
// on a model server's base_url) and a span never carries a secret. The parameter names stay.
type redactURL struct{ next http.RoundTripper }

func (r redactURL) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.RawQuery != "" || req.URL.User != nil {
		trace.SpanFromContext(req.Context()).SetAttributes(attribute.String("url.full", RedactedURL(req.URL)))
	}
	return r.next.RoundTrip(req)
}

// RedactedURL is u with every query value and any user info replaced by REDACTED.
func RedactedURL(u *url.URL) string {
	c := *u
	q := c.Query()
	for k, vs := range q {
		for i := range vs {
			vs[i] = "REDACTED"
		}
		q[k] = vs
	}
	c.RawQuery = q.Encode()
	if c.User != nil {
		c.User = url.User("REDACTED")
	}
	return c.String()
}
