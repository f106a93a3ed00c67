package llm

import (
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
