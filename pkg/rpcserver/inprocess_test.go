package rpcserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// inProcessRouter runs a router service whose listener serves in process; decide is its
// Decide.
func inProcessRouter(t testing.TB, ctx context.Context, decide func(context.Context, *routerv1.DecideRequest) (*routerv1.DecideResponse, error)) (url string, ln *countingListener, done chan error) {
	t.Helper()
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "router", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = &countingListener{Listener: raw}
	_, done = runServer(t, ctx, rpcserver.Config{Name: "router", Listener: rpcserver.InProcess(ln), Credentials: testinfra.Credentials(t, svcauth.RouterShiro)}, tel,
		func(s *rpcserver.Server) {
			s.Mount(routerv1connect.NewRouterServiceHandler(decider{decide: decide}, s.HandlerOptions()...))
		})
	return "http://" + raw.Addr().String(), ln, done
}

type decider struct {
	routerv1connect.UnimplementedRouterServiceHandler
	decide func(context.Context, *routerv1.DecideRequest) (*routerv1.DecideResponse, error)
}

func (d decider) Decide(ctx context.Context, req *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
	return d.decide(ctx, req)
}

// routerClient is a client of the router as caller, through the suite's client.
func routerClient(t testing.TB, url, caller string, extra ...connect.ClientOption) routerv1connect.RouterServiceClient {
	t.Helper()
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: caller, LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := rpcserver.ClientOptions(tel, 5*time.Second, append([]connect.ClientOption{svcauth.Client(testinfra.Credentials(t, caller), svcauth.RouterShiro)}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), url, opts...)
}

type callerKey struct{}

// A unary Connect call to a service of this process serving in process opens no connection,
// and its handler sees what it would see over the network: the JobID from the wire, the
// caller proven by its credentials, none of the caller's own context values.
func TestInProcessUnaryCallMakesNoConnection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type seen struct {
		job    string
		leaked bool
		span   trace.SpanContext
	}
	got := make(chan seen, 4)
	url, ln, done := inProcessRouter(t, ctx, func(ctx context.Context, req *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
		got <- seen{job: jobid.FromContext(ctx), leaked: ctx.Value(callerKey{}) != nil, span: trace.SpanContextFromContext(ctx)}
		return &routerv1.DecideResponse{}, nil
	})
	const id = "job_20261128_007"
	// The caller's span, unrecorded as by default (no exporter): the handler runs in its trace.
	caller, err := telemetry.New(ctx, telemetry.Config{ServiceName: "caller", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	cctx, span := caller.Tracer("t").Start(context.WithValue(jobid.WithJobID(ctx, id), callerKey{}, "the caller's own value"), "call")
	defer span.End()
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithProtoJSON()}} {
		if _, err := routerClient(t, url, svcauth.ChatMio, opts...).Decide(cctx, &routerv1.DecideRequest{Text: "hi", JobId: id}); err != nil {
			t.Fatal(err)
		}
		s := <-got
		if s.job != id || s.leaked {
			t.Fatalf("handler saw job %q, caller's context value leaked: %v", s.job, s.leaked)
		}
		if sc := span.SpanContext(); !s.span.IsValid() || s.span.TraceID() != sc.TraceID() || s.span.SpanID() == sc.SpanID() {
			t.Fatalf("handler's span %s/%s, want the caller's trace %s under a span of its own", s.span.TraceID(), s.span.SpanID(), sc.TraceID())
		}
	}
	if n := ln.n.Load(); n != 0 {
		t.Fatalf("%d connections for in-process unary calls", n)
	}
	// The gRPC protocol (trailers) still goes over the listener.
	if _, err := routerClient(t, url, svcauth.ChatMio, connect.WithGRPC()).Decide(cctx, &routerv1.DecideRequest{Text: "hi", JobId: id}); err != nil {
		t.Fatal(err)
	}
	<-got
	if ln.n.Load() == 0 {
		t.Fatal("a gRPC call was not made over the listener")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// In process, a caller still has to prove who it is, and the authorization matrix still
// decides whether it may call.
func TestInProcessCallStillProvesItsCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := atomic.Bool{}
	url, ln, done := inProcessRouter(t, ctx, func(context.Context, *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
		called.Store(true)
		return &routerv1.DecideResponse{}, nil
	})
	anon := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), url)
	if _, err := anon.Decide(ctx, &routerv1.DecideRequest{Text: "hi"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("a call without credentials: %v, want unauthenticated", err)
	}
	// The executor is not among the router's callers in the matrix.
	if _, err := routerClient(t, url, svcauth.Executor).Decide(ctx, &routerv1.DecideRequest{Text: "hi"}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("a caller the matrix does not allow: %v, want permission denied", err)
	}
	if called.Load() {
		t.Fatal("the handler ran for a refused caller")
	}
	if ln.n.Load() != 0 {
		t.Fatal("the refused calls went over the network")
	}
	cancel()
	<-done
}

// The caller's cancellation reaches the handler; a panicking handler fails its call, not the
// process; once the service stopped, calls fail as they do against a closed port.
func TestInProcessCancellationPanicAndStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started, cancelled := make(chan struct{}), make(chan struct{})
	url, _, done := inProcessRouter(t, ctx, func(ctx context.Context, req *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
		switch req.GetText() {
		case "panic":
			panic("boom")
		case "wait":
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		}
		return &routerv1.DecideResponse{}, nil
	})
	c := routerClient(t, url, svcauth.ChatMio)
	if _, err := c.Decide(ctx, &routerv1.DecideRequest{Text: "panic"}); err == nil {
		t.Fatal("a panicking handler answered")
	}
	cctx, ccancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Decide(cctx, &routerv1.DecideRequest{Text: "wait"})
		errc <- err
	}()
	<-started
	ccancel()
	<-cancelled
	if err := <-errc; !errors.Is(err, context.Canceled) && connect.CodeOf(err) != connect.CodeCanceled {
		t.Fatalf("cancelled call: %v", err)
	}
	if _, err := c.Decide(ctx, &routerv1.DecideRequest{Text: "ok"}); err != nil {
		t.Fatalf("after a panic and a cancellation: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decide(context.Background(), &routerv1.DecideRequest{Text: "ok"}); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("a call to the stopped service: %v, want unavailable", err)
	}
}
