package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

// traced is an env whose chat-mio spans are recorded.
type traced struct {
	*env
	rec *tracetest.SpanRecorder
	tr  trace.Tracer
}

func newTraced(t *testing.T, opts ...envOpt) *traced {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: "chat-mio", SpanProcessors: []sdktrace.SpanProcessor{rec}})
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, withConfig(func(c *app.Config) { c.Tracer = tel.Tracer("chat-mio") }))
	return &traced{env: newEnv(t, opts...), rec: rec, tr: tel.Tracer("gateway")}
}

// event handles a message as a gateway's event would arrive: in a trace of its own (a new
// request), with the JobID the gateway gave it in the baggage ("" for none).
func (e *traced) event(t *testing.T, baggageID, text string) (*chatv1.HandleMessageResponse, trace.SpanContext) {
	t.Helper()
	ctx, span := e.tr.Start(context.Background(), "line.event", trace.WithNewRoot())
	defer span.End()
	if baggageID != "" {
		ctx = jobid.WithJobID(ctx, baggageID)
	}
	res, err := e.app.HandleMessage(ctx, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return res, span.SpanContext()
}

// turnSpan is the chat.handle_message span of the turn whose request span is req.
func (e *traced) turnSpan(t *testing.T, req trace.SpanContext) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range e.rec.Ended() {
		if s.Name() != "chat.handle_message" {
			continue
		}
		if s.Parent().SpanID() == req.SpanID() {
			return s
		}
		for _, l := range s.Links() {
			if l.SpanContext.SpanID() == req.SpanID() {
				return s
			}
		}
	}
	t.Fatalf("no chat.handle_message span for request %s", req.SpanID())
	return nil
}

// TestTypedCommandsJoinTheJobsTrace: a typed /approve, /deny or /pick arrives as a new request
// (a trace of its own) and keeps the job's id whatever id the caller brought; the turn runs in the
// job's trace, linked to the request, so approval's decision, the execution and the reply's
// buttons are the job's; the job's stored context names that trace.
func TestTypedCommandsJoinTheJobsTrace(t *testing.T) {
	tests := []struct {
		name    string
		start   string
		command func(id string) string
		// baggage is the id the command's caller brought: none (the terminal), or one the
		// gateway drew for the message although it names a job.
		baggage string
		// decided is approval's log line for what the command made it do.
		decided string
	}{
		{"typed /approve from the terminal", codeMsg, func(id string) string { return "/approve " + id }, "", "approval.approve"},
		{"typed /deny with a fresh id in the baggage", codeMsg, func(id string) string { return "/deny " + id + " not now" }, "job_20991231_999", "approval.deny"},
		{"typed /pick", "/deliberate docs/guide.md を作って", func(id string) string { return "/pick " + id + " 2" }, "", "approval.requested"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTraced(t)
			first, firstReq := e.event(t, "", tc.start)
			id := first.GetJobId()
			jobTrace := firstReq.TraceID()
			res, req := e.event(t, tc.baggage, tc.command(id))
			if res.GetJobId() != id {
				t.Fatalf("the command answered as job %s, want %s", res.GetJobId(), id)
			}
			turn := e.turnSpan(t, req)
			if turn.SpanContext().TraceID() != jobTrace || len(turn.Links()) != 1 || turn.Links()[0].SpanContext.SpanID() != req.SpanID() {
				t.Fatalf("turn in trace %s with links %v; want the job's trace %s, linked to the request", turn.SpanContext().TraceID(), turn.Links(), jobTrace)
			}
			if attr(turn, jobid.BaggageKey) != id {
				t.Errorf("turn names job %q, want %s", attr(turn, jobid.BaggageKey), id)
			}
			if got := telemetry.ParseTraceParent(res.GetTraceParent()); got.TraceID() != jobTrace {
				t.Errorf("reply's trace %s, want the job's %s (its buttons continue it)", got.TraceID(), jobTrace)
			}
			// What approval did for the command is in the job's trace too (its log names the trace).
			if got := loggedTrace(t, e.peers.Approval.Logs.String(), tc.decided, id); got != jobTrace.String() {
				t.Errorf("approval logged %s of %s in trace %s, want %s", tc.decided, id, got, jobTrace)
			}
			if stored := telemetry.ParseTraceParent(e.peers.Job(t, id).GetTraceParent()); stored.TraceID() != jobTrace {
				t.Errorf("approval stored trace %s for %s, want %s", stored.TraceID(), id, jobTrace)
			}
		})
	}
}

// TestRetryIsANewJobWithATraceOfItsOwn: /retry is about the old job (its turn joins the old
// job's trace) and starts a new job, whose trace is new and linked to both the old job's and the
// request.
func TestRetryIsANewJobWithATraceOfItsOwn(t *testing.T) {
	e := newTraced(t)
	first, firstReq := e.event(t, "", codeMsg)
	old := first.GetJobId()
	res, req := e.event(t, "", "/retry "+old)
	if res.GetJobId() == old || !jobid.Valid(res.GetJobId()) {
		t.Fatalf("retry answered as job %q", res.GetJobId())
	}
	turn := e.turnSpan(t, req)
	if turn.SpanContext().TraceID() != firstReq.TraceID() {
		t.Fatalf("the retry's turn is in trace %s, want the old job's %s", turn.SpanContext().TraceID(), firstReq.TraceID())
	}
	var retry sdktrace.ReadOnlySpan
	for _, s := range e.rec.Ended() {
		if s.Name() == "chat.retry" {
			retry = s
		}
	}
	if retry == nil {
		t.Fatal("no chat.retry span")
	}
	newTrace := retry.SpanContext().TraceID()
	links := map[trace.SpanID]bool{}
	for _, l := range retry.Links() {
		links[l.SpanContext.SpanID()] = true
	}
	if newTrace == firstReq.TraceID() || newTrace == req.TraceID() || !links[turn.SpanContext().SpanID()] || !links[req.SpanID()] {
		t.Fatalf("retry trace %s links %v; want a new trace linked to the old job's turn and the request", newTrace, retry.Links())
	}
	if attr(retry, jobid.BaggageKey) != res.GetJobId() {
		t.Errorf("chat.retry names job %q", attr(retry, jobid.BaggageKey))
	}
	if got := telemetry.ParseTraceParent(res.GetTraceParent()).TraceID(); got != newTrace {
		t.Errorf("reply's trace %s, want the new job's %s", got, newTrace)
	}
	if stored := telemetry.ParseTraceParent(e.peers.Job(t, res.GetJobId()).GetTraceParent()).TraceID(); stored != newTrace {
		t.Errorf("approval stored trace %s for the new job, want %s", stored, newTrace)
	}
}

// TestDecisionInAnotherChatIsToldToTheRequester: an approver who approves from another chat gets
// the answer there, and the requester's chat is told once, through approval's push.
func TestDecisionInAnotherChatIsToldToTheRequester(t *testing.T) {
	e := newEnv(t)
	id := e.send(t, approver, codeMsg).GetJobId()
	res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: "line:Cteam", Channel: "line", UserId: approver, Text: "/approve " + id})
	mustContain(t, text(res), id, "実行: 1 件")
	p := waitPush(t, e.peers.Gateway)
	if p.GetSessionId() != session || p.GetJobId() != id || p.GetRetryKey() != id+":decision" {
		t.Fatalf("push %v, want the notice to %s", p, session)
	}
	mustContain(t, p.GetMessages()[0].GetText(), id, "が承認しました")
	select {
	case more := <-e.peers.Gateway.Pushed:
		t.Fatalf("a second push: %v", more)
	case <-time.After(0):
	}
}

// loggedTrace is the trace_id of the last log line msg about job in a JSON log.
func loggedTrace(t *testing.T, log, msg, job string) string {
	t.Helper()
	found := ""
	for _, line := range strings.Split(log, "\n") {
		var rec struct {
			Msg     string `json:"msg"`
			JobID   string `json:"job_id"`
			TraceID string `json:"trace_id"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == msg && rec.JobID == job {
			found = rec.TraceID
		}
	}
	if found == "" {
		t.Fatalf("no %s line about %s in the log", msg, job)
	}
	return found
}
