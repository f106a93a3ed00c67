package telemetry

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestJoinTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t")
	jobCtx, jobSpan := tr.Start(context.Background(), "job.requested")
	stored := TraceParent(jobCtx)
	jobSpan.End()
	if sc := ParseTraceParent(stored); !sc.Equal(jobSpan.SpanContext().WithRemote(true)) {
		t.Fatalf("traceparent %q parses to %v, want %v", stored, sc, jobSpan.SpanContext())
	}

	type key struct{}
	reqCtx, reqSpan := tr.Start(context.WithValue(context.Background(), key{}, "kept"), "typed.command")
	cases := []struct {
		name     string
		ctx      context.Context
		tp       string
		trace    trace.TraceID
		parent   trace.SpanID
		linkedTo trace.SpanID
	}{
		{"a new request joins the job's trace, linked to the request", reqCtx, stored,
			jobSpan.SpanContext().TraceID(), jobSpan.SpanContext().SpanID(), reqSpan.SpanContext().SpanID()},
		{"already in the job's trace: an ordinary child", jobCtx, stored,
			jobSpan.SpanContext().TraceID(), jobSpan.SpanContext().SpanID(), trace.SpanID{}},
		{"no stored context: a child of the request", reqCtx, "",
			reqSpan.SpanContext().TraceID(), reqSpan.SpanContext().SpanID(), trace.SpanID{}},
		{"a malformed stored context counts as none", reqCtx, "00-zz-01",
			reqSpan.SpanContext().TraceID(), reqSpan.SpanContext().SpanID(), trace.SpanID{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, span := JoinTrace(tc.ctx, tr, tc.tp, "action")
			span.End()
			if ctx.Value(key{}) != tc.ctx.Value(key{}) {
				t.Error("context values lost")
			}
			ended := rec.Ended()
			got := ended[len(ended)-1]
			if got.SpanContext().TraceID() != tc.trace || got.Parent().SpanID() != tc.parent {
				t.Errorf("span in trace %s under %s, want %s under %s", got.SpanContext().TraceID(), got.Parent().SpanID(), tc.trace, tc.parent)
			}
			var links []trace.SpanID
			for _, l := range got.Links() {
				links = append(links, l.SpanContext.SpanID())
			}
			switch {
			case tc.linkedTo.IsValid() && (len(links) != 1 || links[0] != tc.linkedTo):
				t.Errorf("links %v, want one to %s", links, tc.linkedTo)
			case !tc.linkedTo.IsValid() && len(links) != 0:
				t.Errorf("links %v, want none", links)
			}
		})
	}
}
