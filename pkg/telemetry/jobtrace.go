package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TraceParent is the W3C traceparent of ctx's span ("" when ctx has none): what a job stores
// when it is created, so that every later action on it can join its trace.
func TraceParent(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// ParseTraceParent is the span context a traceparent names (invalid when it names none).
func ParseTraceParent(tp string) trace.SpanContext {
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}

// JoinTrace starts span name for an action on a job whose trace is traceparent (the job's stored
// context). When ctx already runs in that trace (a button press, a call from a service that
// joined it), the span is an ordinary child of ctx's span. When the action arrived in a trace
// of its own (a typed command, a REST call, a sweeper tick), the span is a child of the job's
// stored span, in the job's trace, with a link to ctx's span: the job stays one trace and the
// request that brought the action is one hop away. Without a valid traceparent (a job created
// before contexts were stored) the span is a child of ctx. Values and cancellation of ctx are
// kept either way.
func JoinTrace(ctx context.Context, tr trace.Tracer, traceparent, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	job := ParseTraceParent(traceparent)
	cur := trace.SpanContextFromContext(ctx)
	if !job.IsValid() || job.TraceID() == cur.TraceID() {
		return tr.Start(ctx, name, opts...)
	}
	if cur.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: cur}))
	}
	return tr.Start(trace.ContextWithRemoteSpanContext(ctx, job), name, opts...)
}
