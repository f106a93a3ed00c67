package rpcserver

import (
	"context"
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// NewHTTPClient returns an HTTP client that speaks HTTP/2 without TLS (h2c) to the suite's
// services, which is what the gRPC protocol and server streams need; a unary call to a
// service of this process that serves in process (InProcess) makes no connection.
func NewHTTPClient() *http.Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &inProcessTransport{next: &http.Transport{
		Protocols:           &protocols,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     clientIdleTimeout,
	}}}
}

// clientIdleTimeout is below the listeners' default idle timeout (http.idle_timeout, 30 s): the
// client lets an idle connection go before the server would close it under a request.
const clientIdleTimeout = 20 * time.Second

// ClientOptions are the options every Connect client of the suite uses: tracing with baggage
// propagation (so the JobID travels; a request's job_id field is put in the baggage) and a
// default deadline for calls made without one. Extra
// options (e.g. WithInternalToken) are appended.
func ClientOptions(tel *telemetry.Telemetry, defaultTimeout time.Duration, extra ...connect.ClientOption) ([]connect.ClientOption, error) {
	oi, err := otelconnect.NewInterceptor(
		otelconnect.WithTracerProvider(tel.TracerProvider),
		otelconnect.WithPropagator(tel.Propagator),
		otelconnect.WithoutMetrics(),
	)
	if err != nil {
		return nil, err
	}
	return append([]connect.ClientOption{connect.WithInterceptors(deadline(defaultTimeout), jobIDClient(), oi)}, extra...), nil
}

func deadline(d time.Duration) connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if _, ok := ctx.Deadline(); !ok && d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			return next(ctx, req)
		}
	})
}
