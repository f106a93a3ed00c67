package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// A handled message costs the store one read (the session with the event's kept reply) and one
// write at the end (its memory with the reply). These tests pin down, for every way a turn
// ends, what that one write holds — and that a turn without an answer writes nothing.

// wantRecord is what a turn's one RecordTurn must hold.
type wantRecord struct {
	// user is the remembered user text ("" when the turn remembers nothing).
	user  string
	route string
	// kept: the reply is kept for the event.
	kept bool
}

func checkRecord(t *testing.T, got app.TurnRecord, res *chatv1.HandleMessageResponse, event string, want wantRecord) {
	t.Helper()
	if want.user == "" {
		if len(got.Turns) != 0 {
			t.Errorf("turns %+v, want none", got.Turns)
		}
	} else {
		if len(got.Turns) != 2 || got.Turns[0].Role != "user" || got.Turns[0].Text != want.user ||
			got.Turns[1].Role != "assistant" || got.Turns[1].Text != text(res) {
			t.Errorf("turns %+v, want the user's %q and the reply %q", got.Turns, want.user, text(res))
		}
		if got.Day == "" || got.MemoryTurns != 20 {
			t.Errorf("memory day %q bound %d", got.Day, got.MemoryTurns)
		}
	}
	if got.Route != want.route {
		t.Errorf("route %q, want %q", got.Route, want.route)
	}
	if !want.kept {
		if got.EventID != "" || got.Reply != nil {
			t.Errorf("reply kept for %q", got.EventID)
		}
		return
	}
	if got.EventID != session+"|"+event || got.ReplyTTL != 24*time.Hour {
		t.Errorf("reply kept for %q for %v, want %q for 24h", got.EventID, got.ReplyTTL, session+"|"+event)
	}
	var kept chatv1.HandleMessageResponse
	if err := proto.Unmarshal(got.Reply, &kept); err != nil || !proto.Equal(&kept, res) {
		t.Errorf("kept reply %v (%v), want the answer %v", &kept, err, res)
	}
}

func TestTurnIsRecordedInOneWrite(t *testing.T) {
	chat := app.RouteResult{Decision: app.Decision{Route: "CHAT", Source: "SIGNALS"}, FinalRoute: "CHAT"}
	for _, tc := range []struct {
		name, text, event string
		route             app.RouteResult
		setup             func(u *unit)
		want              wantRecord
	}{
		{name: "chat", text: "やあ", event: "ev-1", route: chat, want: wantRecord{user: "やあ", route: "CHAT", kept: true}},
		{name: "chat without an event id", text: "やあ", route: chat, want: wantRecord{user: "やあ", route: "CHAT"}},
		{name: "proposal waiting for approval", text: "docs/guide.md を作って", event: "ev-2", route: codeRoute(),
			setup: func(u *unit) { u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomePending} },
			want:  wantRecord{user: "docs/guide.md を作って", route: "CODE", kept: true}},
		{name: "refused route", text: "コードを書いて", event: "ev-3",
			route: app.RouteResult{Decision: app.Decision{Route: "CODE"}, FinalRoute: "CODE", Refusal: "local only"},
			want:  wantRecord{user: "コードを書いて", kept: true}},
		{name: "router refusing for good", text: "やあ", event: "ev-4",
			setup: func(u *unit) {
				u.router.err = &domain.PeerError{Peer: "router-shiro", Kind: domain.ErrInvalid, Message: "text too long"}
			},
			want: wantRecord{kept: true}},
		{name: "command", text: "/help", event: "ev-5", want: wantRecord{kept: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUnit(t)
			u.router.res = tc.route
			if tc.setup != nil {
				tc.setup(u)
			}
			req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: tc.text, EventId: tc.event}
			res, err := u.app.HandleMessage(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.store.loaded(); len(got) != 1 || got[0] != replyKeyOf(tc.event) {
				t.Errorf("loads %q, want one for %q", got, replyKeyOf(tc.event))
			}
			recs := u.store.recorded()
			if len(recs) != 1 {
				t.Fatalf("%d writes, want 1: %+v", len(recs), recs)
			}
			checkRecord(t, recs[0], res, tc.event, tc.want)
		})
	}
}

func replyKeyOf(event string) string {
	if event == "" {
		return ""
	}
	return session + "|" + event
}

// A command without an event id and without memory leaves nothing to write: no store call.
func TestCommandWithoutEventWritesNothing(t *testing.T) {
	u := newUnit(t)
	u.send(t, "/help", "ja")
	if recs := u.store.recorded(); len(recs) != 0 {
		t.Fatalf("writes %+v, want none", recs)
	}
}

// A redelivered event is answered with the kept reply, read with the session: no second turn,
// no second write.
func TestRedeliveredEventIsAnsweredFromTheLoad(t *testing.T) {
	u := newUnit(t)
	u.router.res = app.RouteResult{Decision: app.Decision{Route: "CHAT"}, FinalRoute: "CHAT"}
	req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "やあ", EventId: "ev-again"}
	first, err := u.app.HandleMessage(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	u.model.reply = "a different answer"
	second, err := u.app.HandleMessage(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(first, second) {
		t.Fatalf("redelivery answered %v, want %v", second, first)
	}
	if n := len(u.model.calls()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	if recs := u.store.recorded(); len(recs) != 1 {
		t.Errorf("%d writes, want 1", len(recs))
	}
	if got := u.store.loaded(); len(got) != 2 || got[1] != session+"|ev-again" {
		t.Errorf("loads %q", got)
	}
}

// A deferred turn (the router or the chat model unreachable) and an abandoned one (the caller
// gave up) write nothing: not the reply, not the memory, not the route the router chose. The
// redelivered event runs the turn again from the same state.
func TestTurnWithoutAnswerWritesNothing(t *testing.T) {
	chat := app.RouteResult{Decision: app.Decision{Route: "CHAT"}, FinalRoute: "CHAT"}
	for _, tc := range []struct {
		name  string
		setup func(u *unit)
		ctx   func() context.Context
	}{
		{name: "router unreachable", setup: func(u *unit) {
			u.router.err = &domain.PeerError{Peer: "router-shiro", Kind: domain.ErrUnavailable, Cause: errors.New("connection refused")}
		}},
		{name: "chat model unreachable", setup: func(u *unit) {
			u.model.err = fmt.Errorf("ollama chat-v1: %w: connection refused", llm.ErrUnavailable)
		}},
		{name: "retry whose chat model is unreachable", setup: func(u *unit) {
			// /retry says "retrying" before the conversation fails: still nothing is written.
			rec := `{"session_id":"` + session + `","text":"やあ","route":"CHAT"}`
			if err := u.store.SaveOptions(context.Background(), "job_20251231_001:retry", []byte(rec), time.Hour); err != nil {
				t.Fatal(err)
			}
			u.model.err = fmt.Errorf("ollama chat-v1: %w: connection refused", llm.ErrRateLimited)
		}},
		{name: "caller gone", ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUnit(t)
			u.router.res = chat
			if tc.setup != nil {
				tc.setup(u)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			text := "やあ"
			if strings.HasPrefix(tc.name, "retry") {
				text = "/retry job_20251231_001"
			}
			res, err := u.app.HandleMessage(ctx, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
				Text: text, EventId: "ev-none"})
			if err == nil {
				t.Fatalf("answered %v", res)
			}
			if recs := u.store.recorded(); len(recs) != 0 {
				t.Fatalf("writes %+v, want none", recs)
			}
		})
	}
}

// With the store unreachable the session is new and remembers nothing; the reply (with the
// warning) is still offered for keeping, in the one write.
func TestDegradedSessionKeepsOnlyTheReply(t *testing.T) {
	u := newUnit(t)
	u.store.down = true
	u.router.res = app.RouteResult{Decision: app.Decision{Route: "CHAT"}, FinalRoute: "CHAT"}
	res, err := u.app.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Text: "やあ", EventId: "ev-down"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text(res), domain.T(domain.JA, domain.MsgStoreDown)) {
		t.Fatalf("reply %q does not warn of the store", text(res))
	}
	recs := u.store.recorded()
	if len(recs) != 1 {
		t.Fatalf("%d writes, want 1", len(recs))
	}
	checkRecord(t, recs[0], res, "ev-down", wantRecord{kept: true})
}

// An image's answer is remembered as words (never the picture) with the kept reply.
func TestImageTurnIsRecordedInOneWrite(t *testing.T) {
	s := &steps{}
	st := newMemStore()
	a := newImageApp(t, &fakeVision{steps: s}, &fakeImages{steps: s}, st)
	res, err := a.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Text: "これは何？", EventId: "ev-img", Image: &chatv1.Image{Data: []byte("\xff\xd8\xff jpeg"), MimeType: "image/jpeg", Source: "line:1"}})
	if err != nil {
		t.Fatal(err)
	}
	recs := st.recorded()
	if len(recs) != 1 {
		t.Fatalf("%d writes, want 1", len(recs))
	}
	checkRecord(t, recs[0], res, "ev-img", wantRecord{user: "[image] これは何？", kept: true})
}

// An execution slower than the reply budget: the reply ("running", async_pending) is kept when
// it is sent; the result pushed later writes no turn of its own.
func TestAsyncExecutionKeepsTheRunningReply(t *testing.T) {
	u := newUnitWith(t, func(c *app.Config) { c.ReplyBudget = time.Millisecond })
	gate := make(chan struct{})
	u.executor.gate = gate
	u.approvals.decided = app.ApprovalJob{ID: "job_20260101_007", Status: app.StatusGranted}
	u.executor.res = app.Execution{Success: true, Executed: 1, Text: "done"}
	res, err := u.app.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Text: "/approve job_20260101_007", EventId: "ev-async"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.GetAsyncPending() {
		t.Fatalf("async_pending not set: %s", text(res))
	}
	close(gate)
	if err := u.app.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(u.notifier.pushed); n != 1 {
		t.Fatalf("%d pushes, want the result", n)
	}
	recs := u.store.recorded()
	if len(recs) != 1 {
		t.Fatalf("%d writes, want 1", len(recs))
	}
	checkRecord(t, recs[0], res, "ev-async", wantRecord{kept: true})
}
