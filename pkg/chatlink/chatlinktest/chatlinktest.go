// Package chatlinktest is a fake chat-mio ChatService for the gateways' tests, served over h2c
// like the real one.
package chatlinktest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/baggage"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// FakeChat is chat-mio's ChatService as the gateway sees it. Texts steer it:
// "slow:<ms> …" answers late, "approve" asks for an approval, "block" waits until released,
// "fail:<n>" fails with Unavailable n times first.
type FakeChat struct {
	mu       sync.Mutex
	requests []*chatv1.HandleMessageRequest
	headers  map[string]http.Header // by event id: the trace and baggage each call carried
	failures map[string]int
	// Release answers every "block" request when closed.
	Release chan struct{}
	// Started receives the event id of every request as it arrives.
	Started chan string
}

func NewFakeChat() *FakeChat {
	return &FakeChat{failures: map[string]int{}, headers: map[string]http.Header{}, Release: make(chan struct{}), Started: make(chan string, 100)}
}

func (f *FakeChat) HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	if ci, ok := connect.CallInfoForHandlerContext(ctx); ok {
		f.headers[req.GetEventId()] = ci.RequestHeader().Clone()
	}
	f.mu.Unlock()
	select {
	case f.Started <- req.GetEventId():
	default: // nobody is watching (benchmarks)
	}
	text := req.GetText()
	job := "job_20261121_001"
	switch {
	case strings.HasPrefix(text, "slow:"):
		var ms int
		fmt.Sscanf(text, "slow:%d", &ms)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case text == "block":
		select {
		case <-f.Release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case strings.HasPrefix(text, "fail:"):
		var n int
		fmt.Sscanf(text, "fail:%d", &n)
		f.mu.Lock()
		f.failures[req.GetEventId()]++
		failed := f.failures[req.GetEventId()]
		f.mu.Unlock()
		if failed <= n {
			return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("busy"))
		}
	case text == "invalid":
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("bad request"))
	case text == "approve card":
		c := ApprovalCards()[0]
		c.Reply.JobID, c.Reply.Approval.JobID = job, job
		for i := range c.Reply.Actions {
			c.Reply.Actions[i].JobID = job
		}
		return &chatv1.HandleMessageResponse{JobId: job, Messages: []*commonv1.ReplyMessage{ReplyProto(c.Reply)}}, nil
	case text == "screenshot":
		return &chatv1.HandleMessageResponse{JobId: job, Messages: []*commonv1.ReplyMessage{{
			Text: job + " done", JobId: job, Images: []*commonv1.Image{{ContentType: "image/png", Data: PNG(),
				Artifact: "artifacts/" + job + "/000-screenshot.png", Caption: "https://example.com/"}},
		}}}, nil
	case text == "approve":
		return &chatv1.HandleMessageResponse{JobId: job, Messages: []*commonv1.ReplyMessage{{
			Text: "承認が必要です: " + job + "\n変更: docs/README.md", JobId: job,
			Actions: []*commonv1.Action{
				{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE, JobId: job},
				{Kind: commonv1.ActionKind_ACTION_KIND_DENY, JobId: job},
			},
		}}}, nil
	}
	if a := req.GetAction(); a != nil {
		text = a.GetKind().String() + " " + a.GetJobId()
	}
	// A press is applied (the fake has no approvers to refuse it).
	return &chatv1.HandleMessageResponse{JobId: job, Messages: []*commonv1.ReplyMessage{{Text: "echo: " + text, JobId: job}},
		ActionApplied: req.GetAction() != nil}, nil
}

// TraceOf returns the trace id and the baggage job_id of the last call for an event.
func (f *FakeChat) TraceOf(t testing.TB, eventID string) (traceID, jobID string) {
	t.Helper()
	f.mu.Lock()
	h := f.headers[eventID]
	f.mu.Unlock()
	parts := strings.Split(h.Get("Traceparent"), "-")
	if len(parts) != 4 {
		t.Fatalf("call for %s carried traceparent %q", eventID, h.Get("Traceparent"))
	}
	b, err := baggage.Parse(h.Get("Baggage"))
	if err != nil {
		t.Fatalf("call for %s carried baggage %q: %v", eventID, h.Get("Baggage"), err)
	}
	return parts[1], b.Member(jobid.BaggageKey).Value()
}

// Requests are the calls so far.
func (f *FakeChat) Requests() []*chatv1.HandleMessageRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*chatv1.HandleMessageRequest(nil), f.requests...)
}

// CountEvent is how many calls carried the event id.
func (f *FakeChat) CountEvent(id string) int {
	n := 0
	for _, r := range f.Requests() {
		if r.GetEventId() == id {
			n++
		}
	}
	return n
}

// Start serves the fake over h2c, as the suite's clients speak it.
func Start(t testing.TB, f *FakeChat) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(chatv1connect.NewChatServiceHandler(f))
	return testinfra.H2CServer(t, mux)
}
