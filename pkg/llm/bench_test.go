package llm

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkMaskRequest measures masking a 4 KiB prompt before a cloud call.
func BenchmarkMaskRequest(b *testing.B) {
	text := strings.Repeat("設計メモ: token=abcdef123456 連絡先 hanako@example.jp 090-1234-5678 ", 40)
	req := Request{Messages: []Message{{Role: RoleSystem, Content: text}, {Role: RoleUser, Content: text}}}
	b.ReportAllocs()
	for b.Loop() {
		_ = maskRequest(req)
	}
}

// BenchmarkOllamaChat measures one round trip through the adapter against a local server.
func BenchmarkOllamaChat(b *testing.B) {
	f := newFake(b, step{status: 200, body: ollamaOK})
	c, err := NewOllama(Config{Provider: ProviderOllama, Model: "worker-v1:latest", BaseURL: f.srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, JSON: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Chat(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
