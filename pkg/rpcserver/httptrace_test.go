package rpcserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Plain HTTP routes get a server span by the HTTP conventions: in the caller's trace on the
// internal listener, in a new trace on the public one; named by the route; the response's
// status and sizes recorded; a 5xx marks it failed. The handler can still flush.
func TestPlainHTTPRoutesAreTraced(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard, SpanProcessors: []sdktrace.SpanProcessor{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	pln, _ := net.Listen("tcp", "127.0.0.1:0")
	cfg := rpcserver.Config{Name: "t", Listener: ln, PublicListener: pln, Credentials: testinfra.Credentials(t, svcauth.RouterShiro)}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !trace.SpanFromContext(r.Context()).SpanContext().IsValid() {
			t.Error("the handler's context carries no span")
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("echo:"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		_, _ = w.Write(b)
	})
	_, done := runServer(t, ctx, cfg, tel, func(s *rpcserver.Server) {
		s.HandleHTTP(http.MethodPost, "/echo/{name}", echo)
		s.HandleHTTP(http.MethodGet, "/fail", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "broken", http.StatusBadGateway)
		}))
		s.HandlePublic(http.MethodPost, "/hook/{name}", echo)
	})
	defer func() { cancel(); <-done }()

	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	call := func(method, url, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("traceparent", parent)
		req.Header.Set("User-Agent", "trace-test")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if method == http.MethodPost && string(b) != "echo:"+body {
			t.Errorf("%s %s answered %q", method, url, b)
		}
		return res
	}
	call(http.MethodPost, "http://"+ln.Addr().String()+"/echo/a", "hello")
	call(http.MethodGet, "http://"+ln.Addr().String()+"/fail", "")
	call(http.MethodPost, "http://"+pln.Addr().String()+"/hook/b", "public!")

	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		if sp.SpanKind() == trace.SpanKindServer {
			spans[sp.Name()] = sp
		}
	}
	attrs := func(sp sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, kv := range sp.Attributes() {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}

	echoSpan, ok := spans["POST /echo/{name}"]
	if !ok {
		t.Fatalf("no span POST /echo/{name} among %v", keys(spans))
	}
	if got := echoSpan.Parent().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" || !echoSpan.Parent().IsRemote() {
		t.Errorf("internal route's span is not in the caller's trace: parent %v", echoSpan.Parent())
	}
	a := attrs(echoSpan)
	for k, want := range map[string]string{
		"http.request.method": "POST", "http.route": "/echo/{name}", "url.path": "/echo/a", "url.scheme": "http",
		"http.response.status_code": "201", "http.request.body.size": "5", "http.response.body.size": "10",
		"user_agent.original": "trace-test", "network.protocol.version": "1.1", "server.address": "127.0.0.1",
		"network.peer.address": "127.0.0.1", "client.address": "127.0.0.1",
	} {
		if a[k] != want {
			t.Errorf("echo span %s = %q, want %q (all: %v)", k, a[k], want, a)
		}
	}
	if a["server.port"] == "" || a["network.peer.port"] == "" {
		t.Errorf("echo span lacks the ports: %v", a)
	}
	if echoSpan.Status().Code != codes.Unset {
		t.Errorf("echo span status %v", echoSpan.Status())
	}

	fail, ok := spans["GET /fail"]
	if !ok {
		t.Fatalf("no span GET /fail among %v", keys(spans))
	}
	if fail.Status().Code != codes.Error || attrs(fail)["http.response.status_code"] != "502" {
		t.Errorf("5xx span: status %v, attrs %v", fail.Status(), attrs(fail))
	}

	hook, ok := spans["POST /hook/{name}"]
	if !ok {
		t.Fatalf("no span POST /hook/{name} among %v", keys(spans))
	}
	if hook.Parent().IsValid() || hook.SpanContext().TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("public route's span continued the caller's trace: parent %v", hook.Parent())
	}
	if got := attrs(hook)["http.request.body.size"]; got != "7" {
		t.Errorf("public span request body size %q", got)
	}
}

func keys(m map[string]sdktrace.ReadOnlySpan) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Where nothing records spans (no exporter), a plain HTTP route's handler still runs in a span
// of its own: in the caller's trace on the internal listener, in a new trace on the public one.
func TestPlainHTTPRoutesCarryTheTraceWithoutRecording(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	pln, _ := net.Listen("tcp", "127.0.0.1:0")
	cfg := rpcserver.Config{Name: "t", Listener: ln, PublicListener: pln, Credentials: testinfra.Credentials(t, svcauth.RouterShiro)}
	seen := make(chan trace.SpanContext, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- trace.SpanContextFromContext(r.Context())
		_, _ = w.Write([]byte("ok"))
	})
	_, done := runServer(t, ctx, cfg, tel, func(s *rpcserver.Server) {
		s.HandleHTTP(http.MethodGet, "/in", h)
		s.HandlePublic(http.MethodGet, "/hook", h)
	})
	defer func() { cancel(); <-done }()

	const traceID, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	get := func(url string) trace.SpanContext {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("traceparent", "00-"+traceID+"-"+parentSpan+"-01")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(b) != "ok" {
			t.Fatalf("%s: %s %q", url, res.Status, b)
		}
		return <-seen
	}
	in := get("http://" + ln.Addr().String() + "/in")
	if !in.IsValid() || in.TraceID().String() != traceID || in.SpanID().String() == parentSpan {
		t.Fatalf("internal route's span %s/%s, want trace %s under a span of its own", in.TraceID(), in.SpanID(), traceID)
	}
	pub := get("http://" + pln.Addr().String() + "/hook")
	if !pub.IsValid() || pub.TraceID().String() == traceID {
		t.Fatalf("public route's span %s/%s, want a new trace", pub.TraceID(), pub.SpanID())
	}
}
