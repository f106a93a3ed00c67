package telemetry

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

func TestOTLPTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://jaeger:4318":             "http://jaeger:4318/v1/traces",
		"https://otel.example:443/otlp/": "https://otel.example:443/otlp/v1/traces",
		"127.0.0.1:4318":                 "http://127.0.0.1:4318/v1/traces",
	} {
		if got, err := otlpTracesURL(in); err != nil || got != want {
			t.Errorf("otlpTracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x:1", "http://", "://"} {
		if _, err := otlpTracesURL(bad); err == nil {
			t.Errorf("otlpTracesURL(%q) accepted", bad)
		}
	}
}

// TestSpansReachAnOTLPCollector: spans are posted as an OTLP/HTTP protobuf export that the
// collector's own message type decodes, with the service name and the job id of the baggage.
func TestSpansReachAnOTLPCollector(t *testing.T) {
	var mu sync.Mutex
	var got []*coltracepb.ExportTraceServiceRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, &req)
		mu.Unlock()
	}))
	defer srv.Close()
	tel, err := New(context.Background(), Config{ServiceName: "chat-mio", OTLPEndpoint: srv.URL, LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := baggage.NewMember(jobid.BaggageKey, "job_20261127_007")
	b, _ := baggage.New(m)
	ctx := baggage.ContextWithBaggage(context.Background(), b)
	ctx, parent := tel.TracerProvider.Tracer("t").Start(ctx, "chat.turn")
	_, child := tel.TracerProvider.Tracer("t").Start(ctx, "router.decide")
	child.End()
	parent.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	names, traces := map[string]bool{}, map[string]bool{}
	for _, req := range got {
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					job := ""
					for _, kv := range sp.GetAttributes() {
						if kv.GetKey() == jobid.BaggageKey {
							job = kv.GetValue().GetStringValue()
						}
					}
					if service != "chat-mio" || job != "job_20261127_007" {
						t.Errorf("span %s: service %q, job %q", sp.GetName(), service, job)
					}
					names[sp.GetName()] = true
					traces[hex.EncodeToString(sp.GetTraceId())] = true
				}
			}
		}
	}
	if !names["chat.turn"] || !names["router.decide"] || len(traces) != 1 {
		t.Fatalf("exported spans %v in traces %v", names, traces)
	}
}
