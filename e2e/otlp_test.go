package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// span is what the receiver keeps of an exported span.
type span struct {
	Service  string
	Name     string
	TraceID  string
	SpanID   string
	ParentID string
	JobID    string
	// Links are the spans this one links to.
	Links []spanRef
	// Attrs are the span's attributes, their values as text.
	Attrs map[string]string
	// Scope is the instrumentation scope that made the span.
	Scope string
}

// spanRef names a span.
type spanRef struct{ TraceID, SpanID string }

// otlpReceiver is an OTLP/HTTP trace collector (protobuf on /v1/traces): the binaries export
// to it with OTEL_EXPORTER_OTLP_ENDPOINT, the test reads what they sent.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []span
	addr  string
}

func startOTLP(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{addr: ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
		var in coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &in)
		}
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want an OTLP protobuf export", http.StatusBadRequest)
			return
		}
		out, _ := r.Export(req.Context(), &in)
		data, _ := proto.Marshal(out)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(data)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

func (r *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				s := span{Service: service, Name: sp.GetName(), TraceID: hex.EncodeToString(sp.GetTraceId()),
					SpanID: hex.EncodeToString(sp.GetSpanId()), ParentID: hex.EncodeToString(sp.GetParentSpanId()),
					Attrs: map[string]string{}, Scope: ss.GetScope().GetName()}
				for _, l := range sp.GetLinks() {
					s.Links = append(s.Links, spanRef{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
				}
				for _, kv := range sp.GetAttributes() {
					if kv.GetKey() == "job_id" {
						s.JobID = kv.GetValue().GetStringValue()
					}
					v := kv.GetValue()
					switch {
					case v.GetStringValue() != "":
						s.Attrs[kv.GetKey()] = v.GetStringValue()
					default:
						s.Attrs[kv.GetKey()] = strings.TrimSpace(strings.Trim(fmt.Sprint(v.GetValue()), "&{}"))
					}
				}
				r.spans = append(r.spans, s)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Spans returns a copy of everything received so far.
func (r *otlpReceiver) Spans() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...)
}
