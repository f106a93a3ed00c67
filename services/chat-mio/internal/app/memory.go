package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// The daily cutover (SPEC §10): short memory starts afresh at 00:00 local time, and the day that
// ended is summarised by the local chat model into one note the next day's prompts carry. The
// note is written once per session and day (SaveNote keeps the first), so replicas that both run
// the cutover, or a restart in the middle of one, never leave two notes.

// cutoverDelay is how long after midnight the cutover starts, so a turn that began just before
// midnight has written its memory.
const cutoverDelay = 30 * time.Second

// StartCutover runs the daily cutover in the background until Close: once now for the day that
// ended last (a suite that was down at midnight catches up), then every day after midnight in
// cfg.Location. It does nothing when cfg.DailySummary is off.
func (a *App) StartCutover() {
	if !a.cfg.DailySummary {
		return
	}
	a.wg.Go(func() {
		for {
			today := domain.MemoryDay(a.cfg.Now(), a.cfg.Location)
			a.Cutover(a.life, today)
			now := a.cfg.Now().In(a.cfg.Location)
			y, m, d := now.Date()
			next := time.Date(y, m, d+1, 0, 0, 0, 0, a.cfg.Location).Add(cutoverDelay)
			timer := time.NewTimer(next.Sub(now))
			select {
			case <-a.life.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	})
}

// Cutover writes day's note for every session that has memory on the day before: the local
// model's summary of that day. Sessions whose note exists already are left alone. It returns
// how many notes it wrote.
func (a *App) Cutover(ctx context.Context, day string) int {
	prev := domain.PreviousDay(day)
	ids, err := a.store.ActiveSessions(ctx, prev)
	if err != nil {
		a.log.WarnContext(ctx, "memory.cutover_failed", slog.String("day", prev), slog.Any("error", err))
		return 0
	}
	written := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		ok, err := a.summarise(ctx, id, prev, day)
		if err != nil {
			a.log.WarnContext(ctx, "memory.summary_failed", slog.String("session_id", id), slog.String("day", prev), slog.Any("error", err))
			continue
		}
		if ok {
			written++
		}
	}
	if len(ids) > 0 {
		a.log.InfoContext(ctx, "memory.cutover", slog.String("day", prev), slog.Int("sessions", len(ids)), slog.Int("notes", written))
	}
	return written
}

// summarise writes the note of day for session id from its memory of prev.
func (a *App) summarise(ctx context.Context, id, prev, day string) (bool, error) {
	sess, err := a.store.Load(ctx, id, day, 0)
	if err != nil {
		return false, err
	}
	if sess.Note != "" {
		return false, nil
	}
	old, err := a.store.Load(ctx, id, prev, 0)
	if err != nil {
		return false, err
	}
	if len(old.Memory) == 0 {
		return false, nil
	}
	loc := a.cfg.Locale
	var b strings.Builder
	for _, t := range old.Memory {
		fmt.Fprintf(&b, "%s: %s\n", t.Role, t.Text)
	}
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: domain.T(loc, domain.MsgSummaryPrompt, a.cfg.NoteMaxChars)},
		{Role: llm.RoleUser, Content: b.String()},
	}
	sctx, span := a.cfg.Tracer.Start(ctx, "chat.daily_summary", trace.WithAttributes(
		attribute.String("gen_ai.system", a.model.Provider()), attribute.String("gen_ai.request.model", a.model.Model()),
		attribute.String("memory.day", prev)))
	defer span.End()
	// The summary is made by the local model only: a day's conversation never leaves the machine
	// for it.
	res, err := a.model.Chat(sctx, llm.Request{Messages: msgs, Timeout: a.cfg.ChatTimeout, LocalOnly: true})
	if err == nil && strings.TrimSpace(res.Text) == "" {
		err = fmt.Errorf("%w: empty answer", llm.ErrBadResponse)
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "summary failed")
		if errors.Is(err, llm.ErrLocalOnly) {
			return false, fmt.Errorf("the chat model is a cloud model; daily summaries use the local model only: %w", err)
		}
		return false, err
	}
	note := domain.ClipTurn(strings.TrimSpace(res.Text), a.cfg.NoteMaxChars)
	return a.store.SaveNote(ctx, id, day, note)
}

// forget clears the chat's memory of today and yesterday and their notes (/forget).
func (a *App) forget(ctx context.Context, t *turn) {
	if err := a.store.Forget(ctx, t.sess.ID, t.day, domain.PreviousDay(t.day)); err != nil {
		a.log.WarnContext(ctx, "session.forget_failed", slog.Any("error", err))
		t.say(domain.T(t.loc, domain.MsgSettingNotSaved))
		return
	}
	t.sess.Memory, t.sess.Note = nil, ""
	a.log.InfoContext(ctx, "session.forgotten")
	t.say(domain.T(t.loc, domain.MsgForgot))
}
