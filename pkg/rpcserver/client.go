package rpcserver

import (
	"context"
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/h1client"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// NewHTTPClient returns an HTTP client of the suite's services: a unary call in the Connect
// protocol goes over HTTP/1.1 (one write for the request and one for the response on a kept
// connection, where HTTP/2 writes headers and body apart and hands each frame between
// goroutines), sent and answered on the caller's goroutine (h1client), anything else (the gRPC protocol, streams) over HTTP/2 without TLS (h2c); a
// unary call to a service of this process that serves in process (InProcess) makes no
// connection.
func NewHTTPClient() *HTTPClient {
	dial := (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	var h1, h2 http.Protocols
	h1.SetHTTP1(true)
	h2.SetUnencryptedHTTP2(true)
	unary := h1client.New(h1client.Config{
		// A unary call the transport does not send itself (a body of unknown length or above
		// h1client.MaxBody) goes over HTTP/1.1 all the same.
		Fallback: &http.Transport{
			Protocols:           &h1,
			DialContext:         dial,
			MaxConnsPerHost:     unaryConns,
			MaxIdleConnsPerHost: unaryConns,
			IdleConnTimeout:     clientIdleTimeout,
		},
		MaxConnsPerHost: unaryConns,
		MaxIdlePerHost:  unaryConns,
		IdleTimeout:     clientIdleTimeout,
		DialTimeout:     5 * time.Second,
		// A call on a kept connection that ended unanswered is sent once more: a service closes
		// a connection it is answering on only when its handler failed without answering or its
		// process died.
		RetryUnanswered: true,
	})
	return &HTTPClient{client: &http.Client{Transport: &inProcessTransport{
		unary: unary,
		next: &http.Transport{
			Protocols:           &h2,
			DialContext:         dial,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     clientIdleTimeout,
		}}}}
}

// unaryConns is how many HTTP/1.1 connections a client opens to one service, and keeps idle:
// one per call in flight, so a burst's connections are reused, not opened again; a call beyond
// it waits for one to be free. A listener's connections (http.max_conns, 1,024 by default)
// are held by its callers' kept connections too, idle or not: sixteen clients at this bound
// fill it.
const unaryConns = 64

// HTTPClient is the suite's HTTP client of its services (NewHTTPClient), a connect.HTTPClient.
// Do serves a call to a service of this process in process straight away, without the redirect
// and timeout upkeep of http.Client, which such a call never needs (it is answered on the
// caller's goroutine and never redirected); anything else goes through an http.Client, whose
// transport also serves in process what it can. It has nothing to set: a timeout, a cookie jar
// or a redirect policy would hold for some calls only.
type HTTPClient struct {
	client *http.Client
}

// Do sends req as http.Client.Do does.
func (c *HTTPClient) Do(req *http.Request) (*http.Response, error) {
	if req.URL != nil && req.RequestURI == "" {
		if resp, served, err := serveLocal(req); served {
			return resp, err
		}
	}
	return c.client.Do(req)
}

// CloseIdleConnections closes the connections to other processes that are idle.
func (c *HTTPClient) CloseIdleConnections() { c.client.CloseIdleConnections() }

// clientIdleTimeout is below the listeners' default idle timeout (http.idle_timeout, 30 s): the
// client lets an idle connection go before the server would close it under a request.
const clientIdleTimeout = 20 * time.Second

// ClientOptions are the options every Connect client of the suite uses: tracing with baggage
// propagation (so the JobID travels; a request's job_id field is put in the baggage) and a
// default deadline for calls made without one. Extra
// options (e.g. WithInternalToken) are appended.
func ClientOptions(tel *telemetry.Telemetry, defaultTimeout time.Duration, extra ...connect.ClientOption) ([]connect.ClientOption, error) {
	oi, err := traceInterceptor(tel, false)
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
