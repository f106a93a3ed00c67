package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// A turn whose caller gave up (SIGTERM of the gateway mid-answer) is not answered and not
// remembered: the redelivered event gets the real answer, not a cached "the model did not
// answer".
func TestCancelledTurnIsNotCached(t *testing.T) {
	u := newUnit(t)
	u.router.res = app.RouteResult{Decision: app.Decision{Route: "CHAT", Source: "SIGNALS"}, FinalRoute: "CHAT"}
	req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "やあ", EventId: "ev-cancel-1"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := u.app.HandleMessage(ctx, req); err == nil {
		t.Fatalf("cancelled turn answered: %v", res)
	}
	if _, err := u.store.LoadReply(context.Background(), session+"|ev-cancel-1"); err == nil {
		t.Fatal("the cancelled turn's reply was kept")
	}
	res, err := u.app.HandleMessage(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); !strings.Contains(got, "hi") {
		t.Fatalf("redelivery answered %q", got)
	}
	// Now the answer is kept for further redeliveries.
	if _, err := u.store.LoadReply(context.Background(), session+"|ev-cancel-1"); err != nil {
		t.Fatalf("answer not kept: %v", err)
	}
}

// router-shiro unreachable (restarting, too slow) is transient: the turn returns Unavailable
// with no answer and nothing kept, so the gateway retries the event and the user never reads
// an error; a router that refuses the request for good is still answered.
func TestUnreachableRouterDefersTheTurn(t *testing.T) {
	u := newUnit(t)
	chat := app.RouteResult{Decision: app.Decision{Route: "CHAT", Source: "SIGNALS"}, FinalRoute: "CHAT"}
	req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "やあ", EventId: "ev-router-1"}
	u.router.err = &domain.PeerError{Peer: "router-shiro", Kind: domain.ErrUnavailable, Cause: errors.New("connection refused")}
	res, err := u.app.HandleMessage(context.Background(), req)
	if !errors.Is(err, domain.ErrUnavailable) || res != nil {
		t.Fatalf("router down: %v, %v; want ErrUnavailable and no answer", res, err)
	}
	if _, err := u.store.LoadReply(context.Background(), session+"|ev-router-1"); err == nil {
		t.Fatal("the deferred turn's reply was kept")
	}
	u.router.err, u.router.res = nil, chat
	res, err = u.app.HandleMessage(context.Background(), req)
	if err != nil || text(res) != "hi" {
		t.Fatalf("retry after the router is back: %q, %v", text(res), err)
	}

	u.router.err = &domain.PeerError{Peer: "router-shiro", Kind: domain.ErrInvalid, Message: "text too long"}
	res, err = u.app.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Text: "やあ", EventId: "ev-router-2"})
	if err != nil || !strings.Contains(text(res), "router-shiro") {
		t.Fatalf("router refusal: %q, %v; want an answer naming router-shiro", text(res), err)
	}
}

// TestUnreachableChatModelDefersTheTurn: the chat model's server unreachable (or answering
// 5xx/429) defers the turn like an unreachable router — no answer kept, the gateway retries —
// while a model that is too slow is told to the user at once.
func TestUnreachableChatModelDefersTheTurn(t *testing.T) {
	u := newUnit(t)
	u.router.res = app.RouteResult{Decision: app.Decision{Route: "CHAT", Source: "SIGNALS"}, FinalRoute: "CHAT"}
	req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "やあ", EventId: "ev-model-1"}
	for _, cause := range []error{llm.ErrUnavailable, llm.ErrRateLimited} {
		u.model.err = fmt.Errorf("ollama chat-v1: %w: connection refused", cause)
		res, err := u.app.HandleMessage(context.Background(), req)
		if !errors.Is(err, domain.ErrUnavailable) || res != nil {
			t.Fatalf("model %v: %v, %v; want ErrUnavailable and no answer", cause, res, err)
		}
		if _, err := u.store.LoadReply(context.Background(), session+"|ev-model-1"); err == nil {
			t.Fatal("the deferred turn's reply was kept")
		}
	}
	u.model.err = nil
	if res, err := u.app.HandleMessage(context.Background(), req); err != nil || text(res) != "hi" {
		t.Fatalf("retry after the model is back: %q, %v", text(res), err)
	}
	u.model.err = fmt.Errorf("ollama chat-v1: %w", llm.ErrTimeout)
	res, err := u.app.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Text: "やあ", EventId: "ev-model-2"})
	if err != nil || !strings.Contains(text(res), "chat-v1") {
		t.Fatalf("slow model: %q, %v; want an answer naming the model", text(res), err)
	}
}
