package e2e

import (
	"context"
	"encoding/hex"
	"net"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
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
}

// spanRef names a span.
type spanRef struct{ TraceID, SpanID string }

// otlpReceiver is an OTLP/gRPC trace collector: the binaries export to it with
// OTEL_EXPORTER_OTLP_ENDPOINT, the test reads what they sent.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
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
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
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
					SpanID: hex.EncodeToString(sp.GetSpanId()), ParentID: hex.EncodeToString(sp.GetParentSpanId())}
				for _, l := range sp.GetLinks() {
					s.Links = append(s.Links, spanRef{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
				}
				for _, kv := range sp.GetAttributes() {
					if kv.GetKey() == "job_id" {
						s.JobID = kv.GetValue().GetStringValue()
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
