package app_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.AsString()
		}
	}
	return ""
}

// TestJobTraceCarriesJobIDOnEverySpan: a caller without a JobID (the terminal channel) gets one
// drawn in a linked trace of its own (which does not claim to be the job's), and every span of the request's trace, the request's own
// span included, names the job.
func TestJobTraceCarriesJobIDOnEverySpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: "chat-mio", SpanProcessors: []sdktrace.SpanProcessor{rec}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withConfig(func(c *app.Config) { c.Tracer = tel.Tracer("chat-mio") }))
	ctx, req := tel.Tracer("test").Start(context.Background(), "request")
	res, err := e.app.HandleMessage(ctx, &chatv1.HandleMessageRequest{SessionId: "cli:e2e", Channel: "cli", UserId: approver, Text: codeMsg})
	req.End()
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetJobId()
	var inRequest, allocations int
	for _, s := range rec.Ended() {
		switch {
		case s.Name() == "jobid.allocate":
			allocations++
			if s.SpanContext().TraceID() == req.SpanContext().TraceID() || len(s.Links()) != 1 ||
				s.Links()[0].SpanContext.SpanID() != req.SpanContext().SpanID() || attr(s, "jobid.allocated") != id || attr(s, jobid.BaggageKey) != "" {
				t.Errorf("allocation span: trace %s, links %v, attributes %v", s.SpanContext().TraceID(), s.Links(), s.Attributes())
			}
		case s.SpanContext().TraceID() == req.SpanContext().TraceID():
			inRequest++
			if attr(s, jobid.BaggageKey) != id {
				t.Errorf("span %s has job_id %q, want %s", s.Name(), attr(s, jobid.BaggageKey), id)
			}
		}
	}
	if allocations != 1 || inRequest < 2 {
		t.Fatalf("%d allocation spans, %d spans in the request's trace", allocations, inRequest)
	}
}
