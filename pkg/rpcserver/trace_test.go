package rpcserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

type routerB struct {
	routerv1connect.UnimplementedRouterServiceHandler
	log  func(ctx context.Context)
	seen chan string
}

func (r *routerB) Decide(ctx context.Context, req *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
	r.seen <- jobid.FromContext(ctx)
	r.log(ctx)
	return &routerv1.DecideResponse{Decision: &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_CHAT}}, nil
}

type chatA struct {
	chatv1connect.UnimplementedChatServiceHandler
	router routerv1connect.RouterServiceClient
}

func (c *chatA) HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	res, err := c.router.Decide(ctx, &routerv1.DecideRequest{Text: req.GetText(), JobId: jobid.FromContext(ctx)})
	if err != nil {
		return nil, err
	}
	return &chatv1.HandleMessageResponse{JobId: jobid.FromContext(ctx), Decision: res.GetDecision()}, nil
}

type service struct {
	srv  *rpcserver.Server
	rec  *tracetest.SpanRecorder
	logs *testinfra.SyncBuffer
	url  string
	done chan error
}

func start(t *testing.T, ctx context.Context, name, identity string, mount func(*rpcserver.Server)) *service {
	t.Helper()
	return startRecording(t, ctx, name, identity, true, mount)
}

// startRecording starts a service whose spans a recorder receives, or, without recording, one
// that records none (no exporter, no span processor, as the suite runs by default).
func startRecording(t *testing.T, ctx context.Context, name, identity string, recording bool, mount func(*rpcserver.Server)) *service {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	logs := &testinfra.SyncBuffer{}
	var procs []sdktrace.SpanProcessor
	if recording {
		procs = append(procs, rec)
	}
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: name, LogWriter: logs, LogLevel: "debug",
		SpanProcessors: procs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, done := runServer(t, ctx, rpcserver.Config{Name: name, Listener: ln, Credentials: testinfra.Credentials(t, identity)}, tel, mount)
	return &service{srv: srv, rec: rec, logs: logs, url: "http://" + ln.Addr().String(), done: done}
}

// startChain starts service A (chat), which calls service B (router) for every message; B
// reports the JobID its handler saw on seen and logs "router.decision".
func startChain(t *testing.T, ctx context.Context, recording bool) (a, b *service, seen chan string) {
	t.Helper()
	seen = make(chan string, 1)
	b = startRecording(t, ctx, "svc-b", svcauth.RouterShiro, recording, func(s *rpcserver.Server) {
		h := &routerB{seen: seen, log: func(ctx context.Context) { s.Logger().InfoContext(ctx, "router.decision") }}
		s.Mount(routerv1connect.NewRouterServiceHandler(h, s.HandlerOptions()...))
	})
	a = startRecording(t, ctx, "svc-a", svcauth.ChatMio, recording, func(s *rpcserver.Server) {
		opts, err := rpcserver.ClientOptions(s.Telemetry(), 5*time.Second, svcauth.Client(testinfra.Credentials(t, svcauth.ChatMio), svcauth.RouterShiro))
		if err != nil {
			t.Fatal(err)
		}
		rc := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), b.url, opts...)
		s.Mount(chatv1connect.NewChatServiceHandler(&chatA{router: rc}, s.HandlerOptions()...))
	})
	return a, b, seen
}

// startEdge makes the edge (a gateway) whose spans procs receive (none: it records nothing),
// its credentials and its client options for calls to A.
func startEdge(t *testing.T, ctx context.Context, procs ...sdktrace.SpanProcessor) (*telemetry.Telemetry, *svcauth.Credentials, []connect.ClientOption) {
	t.Helper()
	edge, err := telemetry.New(ctx, telemetry.Config{ServiceName: "edge", LogWriter: &testinfra.SyncBuffer{}, SpanProcessors: procs})
	if err != nil {
		t.Fatal(err)
	}
	gw := testinfra.Credentials(t, svcauth.GatewayLine)
	opts, err := rpcserver.ClientOptions(edge, 5*time.Second, svcauth.Client(gw, svcauth.ChatMio))
	if err != nil {
		t.Fatal(err)
	}
	return edge, gw, opts
}

func TestJobIDAndTraceCrossTwoServices(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	a, b, seen := startChain(t, ctx, true)

	// The edge (a gateway) starts the trace and puts the JobID in baggage.
	edgeRec := tracetest.NewSpanRecorder()
	_, gw, opts := startEdge(t, ctx, edgeRec)
	const id = "job_20261121_042"
	for _, proto := range []connect.ClientOption{connect.WithGRPC(), connect.WithProtoJSON()} {
		client := chatv1connect.NewChatServiceClient(rpcserver.NewHTTPClient(), a.url, append(opts, proto)...)
		assertion, err := gw.Vouch("line", "U1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		mctx := svcauth.WithPrincipal(jobid.WithJobID(ctx, id), svcauth.Principal{Raw: assertion})
		res, err := client.HandleMessage(mctx, &chatv1.HandleMessageRequest{Text: "hi", Channel: "line", UserId: "U1"})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetJobId() != id {
			t.Fatalf("A saw job id %q", res.GetJobId())
		}
		if got := <-seen; got != id {
			t.Fatalf("B's handler saw job id %q", got)
		}
	}
	// Stopping the servers waits for their handlers, so every server span has ended.
	cancel()
	for _, s := range []*service{a, b} {
		if err := <-s.done; err != nil {
			t.Fatalf("server stopped with %v", err)
		}
	}

	spans := append(append(edgeRec.Ended(), a.rec.Ended()...), b.rec.Ended()...)
	if len(a.rec.Ended()) < 4 || len(b.rec.Ended()) < 2 {
		t.Fatalf("spans: edge=%d a=%d b=%d", len(edgeRec.Ended()), len(a.rec.Ended()), len(b.rec.Ended()))
	}
	traces := map[string]bool{}
	for _, sp := range spans {
		traces[sp.SpanContext().TraceID().String()] = true
		found := false
		for _, kv := range sp.Attributes() {
			if string(kv.Key) == jobid.BaggageKey && kv.Value.AsString() == id {
				found = true
			}
		}
		if !found {
			t.Errorf("span %q (%s) has no job_id attribute", sp.Name(), sp.Resource())
		}
	}
	// Two calls from the edge: two traces, each spanning edge → A → B.
	if len(traces) != 2 {
		t.Fatalf("want 2 traces (one per call), got %d", len(traces))
	}
	for _, bs := range b.rec.Ended() {
		if !traces[bs.SpanContext().TraceID().String()] {
			t.Fatalf("B span outside the edge traces")
		}
	}

	var rec struct {
		Msg     string `json:"msg"`
		JobID   string `json:"job_id"`
		TraceID string `json:"trace_id"`
	}
	for _, line := range strings.Split(strings.TrimSpace(b.logs.String()), "\n") {
		_ = json.Unmarshal([]byte(line), &rec)
		if rec.Msg == "router.decision" {
			break
		}
	}
	if rec.Msg != "router.decision" || rec.JobID != id || !traces[rec.TraceID] {
		t.Fatalf("B's log record lacks job_id/trace_id: %+v\n%s", rec, b.logs.String())
	}
}

// TestTraceCrossesServicesThatRecordNothing: services that record no span (the suite's default:
// no exporter) still carry the trace on: the last service logs the caller's trace id under a
// span id of its own, with the JobID from the baggage, over h2c with each protocol.
func TestTraceCrossesServicesThatRecordNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	a, b, seen := startChain(t, ctx, false)
	edge, gw, opts := startEdge(t, ctx)
	for i, proto := range []connect.ClientOption{connect.WithGRPC(), connect.WithProtoJSON(), connect.WithGRPCWeb()} {
		id := fmt.Sprintf("job_20261129_%03d", i+1)
		client := chatv1connect.NewChatServiceClient(rpcserver.NewHTTPClient(), a.url, append(opts, proto)...)
		assertion, err := gw.Vouch("line", "U1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// The edge's own span: unrecorded, but with ids.
		sctx, span := edge.Tracer("edge").Start(jobid.WithJobID(ctx, id), "webhook")
		sc := span.SpanContext()
		if !sc.IsValid() || span.IsRecording() {
			t.Fatalf("edge span: valid %v, recording %v", sc.IsValid(), span.IsRecording())
		}
		if _, err := client.HandleMessage(svcauth.WithPrincipal(sctx, svcauth.Principal{Raw: assertion}),
			&chatv1.HandleMessageRequest{Text: "hi", Channel: "line", UserId: "U1"}); err != nil {
			t.Fatal(err)
		}
		span.End()
		if got := <-seen; got != id {
			t.Fatalf("B's handler saw job id %q, want %q", got, id)
		}
		var rec struct {
			Msg     string `json:"msg"`
			JobID   string `json:"job_id"`
			TraceID string `json:"trace_id"`
			SpanID  string `json:"span_id"`
		}
		lines := strings.Split(strings.TrimSpace(b.logs.String()), "\n")
		for j := len(lines) - 1; j >= 0; j-- {
			rec.Msg = ""
			if json.Unmarshal([]byte(lines[j]), &rec) == nil && rec.Msg == "router.decision" {
				break
			}
		}
		if rec.Msg != "router.decision" || rec.JobID != id || rec.TraceID != sc.TraceID().String() ||
			rec.SpanID == "" || rec.SpanID == sc.SpanID().String() {
			t.Fatalf("B's log record %+v, want job %s in trace %s under a span other than the edge's %s\n%s",
				rec, id, sc.TraceID(), sc.SpanID(), b.logs.String())
		}
	}
}

// TestJobIDFieldAndBaggageAgree: the request's job_id field and the baggage are one value by
// the time a handler runs, whichever of them the caller set; a call that carries two
// different ones is refused unless it went through the suite's client (where the field wins).
func TestJobIDFieldAndBaggageAgree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 1)
	b := start(t, ctx, "svc-b", svcauth.RouterShiro, func(s *rpcserver.Server) {
		h := &routerB{seen: seen, log: func(context.Context) {}}
		s.Mount(routerv1connect.NewRouterServiceHandler(h, s.HandlerOptions()...))
	})
	edge, err := telemetry.New(ctx, telemetry.Config{ServiceName: "edge", LogWriter: &testinfra.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	auth := svcauth.Client(testinfra.Credentials(t, svcauth.ChatMio), svcauth.RouterShiro)
	suiteOpts, err := rpcserver.ClientOptions(edge, 5*time.Second, auth)
	if err != nil {
		t.Fatal(err)
	}
	suite := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), b.url, suiteOpts...)
	// A client that propagates baggage but does not reconcile (another implementation).
	oi, err := otelconnect.NewInterceptor(otelconnect.WithTracerProvider(edge.TracerProvider),
		otelconnect.WithPropagator(edge.Propagator), otelconnect.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	raw := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), b.url, connect.WithInterceptors(oi), auth)

	const a, other = "job_20261127_001", "job_20261127_002"
	for _, tc := range []struct {
		name       string
		client     routerv1connect.RouterServiceClient
		bag, field string
		want       string
		code       connect.Code
	}{
		{"field only", raw, "", a, a, 0},
		{"baggage only", raw, a, "", a, 0},
		{"both agree", raw, a, a, a, 0},
		{"both differ", raw, a, other, "", connect.CodeInvalidArgument},
		{"suite client: the field wins", suite, a, other, other, 0},
		{"suite client: field only", suite, "", a, a, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cctx := ctx
			if tc.bag != "" {
				cctx = jobid.WithJobID(ctx, tc.bag)
			}
			_, err := tc.client.Decide(cctx, &routerv1.DecideRequest{Text: "hi", JobId: tc.field})
			if tc.code != 0 {
				if connect.CodeOf(err) != tc.code {
					t.Fatalf("err = %v, want %v", err, tc.code)
				}
				select {
				case got := <-seen:
					t.Fatalf("handler ran with %q", got)
				default:
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := <-seen; got != tc.want {
				t.Fatalf("handler saw job id %q, want %q", got, tc.want)
			}
		})
	}
}
