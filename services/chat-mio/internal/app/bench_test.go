package app_test

import (
	"context"
	"strconv"
	"testing"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
)

// BenchmarkHandleMessage measures one inbound message end to end against real Redis and the
// in-process peers over h2c: a command Mio answers itself, a CHAT message (router + chat model)
// and a CODE message that ends as a pending approval. The _event cases carry a gateway's event
// id, as every message from a channel does: the reply is looked up and kept for redelivery.
// chat-mio logs at info, as the suite ships.
func BenchmarkHandleMessage(b *testing.B) {
	for _, bc := range []struct {
		name, text string
		events     bool
	}{
		{"help", "/help", false},
		{"chat", "おはよう", false},
		{"chat_event", "おはよう", true},
		{"code_pending", codeMsg, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnvB(b, withLogLevel("info"))
			req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: bc.text}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				if bc.events {
					n++
					req.EventId = "ev-" + strconv.Itoa(n)
				}
				if _, err := e.app.HandleMessage(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
