package app_test

import (
	"context"
	"testing"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
)

// BenchmarkHandleMessage measures one inbound message end to end against real Redis and the
// in-process peers over h2c: a command Mio answers itself, a CHAT message (router + chat model)
// and a CODE message that ends as a pending approval.
func BenchmarkHandleMessage(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"help", "/help"},
		{"chat", "おはよう"},
		{"code_pending", codeMsg},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnvB(b)
			req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: bc.text}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.app.HandleMessage(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
