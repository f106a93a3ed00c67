package channel

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// The reply's buttons carry the job's trace: the one chat-mio names when its turn joined a job's
// trace other than the request's (a typed command about an existing job), else the event's own.
func TestRepliesCarryTheJobsTrace(t *testing.T) {
	event := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	const job = "00-0200000000000000000000000000000f-0200000000000000-01"
	for _, tc := range []struct {
		name, chatTrace string
		want            trace.TraceID
	}{
		{"chat-mio names the job's trace", job, telemetry.ParseTraceParent(job).TraceID()},
		{"the request's own trace", "", event.TraceID()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &fakeChannel{}
			chat := &fakeChat{res: chatlink.Response{JobID: "job_20260101_001", TraceParent: tc.chatTrace, Replies: []chatlink.Reply{{
				Text: "approve?", Actions: []chatlink.Action{{Kind: chatlink.ActionApprove, JobID: "job_20260101_001"}}}}}}
			ctx := trace.ContextWithSpanContext(context.Background(), event)
			ev := Event{ID: "E1", Kind: KindMessage, UserID: "U1", Text: "/approve job_20260101_001"}
			if err := newRuntime(ch, chat).process(ctx, ev, nil, Target{SessionID: "fake:U1", Event: &ev, InReply: true}); err != nil {
				t.Fatal(err)
			}
			if len(ch.sends) != 1 {
				t.Fatalf("sends %+v", ch.sends)
			}
			got := telemetry.ParseTraceParent(ch.sends[0].replies[0].Actions[0].Trace)
			if got.TraceID() != tc.want {
				t.Fatalf("button trace %s, want %s", got.TraceID(), tc.want)
			}
		})
	}
}
