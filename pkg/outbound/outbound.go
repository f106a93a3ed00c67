// Package outbound is the HTTP client for the APIs outside the suite (LINE, Slack, the model
// providers): the standard transport with a connection pool sized for concurrent calls to one
// host, so a burst reuses its connections instead of opening (and leaving in TIME_WAIT) one per
// call — the default keeps only two idle connections per host.
package outbound

import (
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// IdlePerHost is how many idle connections to one host are kept for reuse.
const IdlePerHost = 64

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

// Client returns a client whose whole request is bounded by timeout (0: no bound; the caller's
// context decides).
func Client(timeout time.Duration, opts ...Option) *http.Client {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4 * IdlePerHost
	t.MaxIdleConnsPerHost = IdlePerHost
	// An idle connection (its TLS state and buffers, two goroutines) is closed after 30 s: a
	// burst reuses the pool, a quiet suite holds none of it a minute later.
	t.IdleConnTimeout = 30 * time.Second
	if o.tp == nil {
		return &http.Client{Transport: t, Timeout: timeout}
	}
	return &http.Client{Timeout: timeout, Transport: otelhttp.NewTransport(redactURL{t}, otelhttp.WithTracerProvider(o.tp),
		otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Hostname() }))}
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
