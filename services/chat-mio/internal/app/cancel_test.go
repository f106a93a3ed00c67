package app_test

import (
	"context"
	"strings"
	"testing"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
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
