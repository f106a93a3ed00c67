package app_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

// At the daily cutover the local model summarises the chat's day into one note; the next day's
// prompts carry it, a second cutover does not write another, and /forget clears it.
func TestDailyCutoverSummarisesTheDayIntoOneNote(t *testing.T) {
	tokyo := mustTokyo(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 21, 0, 0, 0, tokyo)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, withConfig(func(c *app.Config) { c.Now = clock; c.DailySummary = true }))
	e.send(t, approver, "明日は認証の設計を続けたい")
	e.send(t, approver, "ログインは OAuth にする")
	before := len(e.model.calls())

	e.model.mu.Lock()
	e.model.reply = "認証の設計を続ける予定。ログインは OAuth に決めた。"
	e.model.mu.Unlock()
	if n := e.app.Cutover(t.Context(), "20260102"); n != 1 {
		t.Fatalf("cutover wrote %d notes, want 1", n)
	}
	calls := e.model.calls()
	if len(calls) != before+1 {
		t.Fatalf("summary calls = %d", len(calls)-before)
	}
	sum := calls[before]
	if !sum.LocalOnly || len(sum.Messages) != 2 || sum.Messages[0].Role != llm.RoleSystem ||
		!strings.Contains(sum.Messages[1].Content, "ログインは OAuth にする") {
		t.Fatalf("summary request = %+v", sum)
	}
	// Run again (a second replica, a restart): the note stays as it is and no model call is made.
	if n := e.app.Cutover(t.Context(), "20260102"); n != 0 || len(e.model.calls()) != before+1 {
		t.Fatalf("second cutover wrote %d notes, %d calls", n, len(e.model.calls())-before)
	}

	mu.Lock()
	now = time.Date(2026, 1, 2, 9, 0, 0, 0, tokyo)
	mu.Unlock()
	e.model.mu.Lock()
	e.model.reply = "おはようございます"
	e.model.mu.Unlock()
	e.send(t, approver, "おはよう")
	calls = e.model.calls()
	system := calls[len(calls)-1].Messages[0].Content
	if !strings.Contains(system, "前日の会話のメモ") || !strings.Contains(system, "ログインは OAuth に決めた") {
		t.Fatalf("next day's prompt lacks the note:\n%s", system)
	}
	if h := calls[len(calls)-1].Messages; len(h) != 2 {
		t.Fatalf("next day's prompt carries %d messages (yesterday's turns must not come back)", len(h))
	}

	mustContain(t, text(e.send(t, approver, "/forget")), "記憶")
	e.send(t, approver, "覚えてる？")
	calls = e.model.calls()
	if system := calls[len(calls)-1].Messages[0].Content; strings.Contains(system, "OAuth") {
		t.Fatalf("prompt after /forget still carries the note:\n%s", system)
	}
	if h := calls[len(calls)-1].Messages; len(h) != 2 {
		t.Fatalf("prompt after /forget carries %d messages", len(h))
	}
	// Forgotten days are not summarised again.
	if n := e.app.Cutover(t.Context(), "20260102"); n != 0 {
		t.Fatalf("cutover after /forget wrote %d notes", n)
	}
}

// A cloud chat model never gets a day's conversation for a summary: no note, no call.
func TestDailySummaryUsesTheLocalModelOnly(t *testing.T) {
	tokyo := mustTokyo(t)
	now := time.Date(2026, 1, 1, 21, 0, 0, 0, tokyo)
	e := newEnv(t, withConfig(func(c *app.Config) { c.Now = func() time.Time { return now }; c.DailySummary = true }))
	e.send(t, approver, "こんにちは")
	e.model.mu.Lock()
	e.model.err = llm.ErrLocalOnly
	e.model.mu.Unlock()
	if n := e.app.Cutover(t.Context(), "20260102"); n != 0 {
		t.Fatalf("cutover wrote %d notes with a model that refuses local-only calls", n)
	}
	if !strings.Contains(e.logs.String(), "memory.summary_failed") {
		t.Fatalf("the failed summary is not logged:\n%s", e.logs.String())
	}
}
