// Package app holds the LINE gateway's use cases: processing a stored webhook event (allowlist,
// loading animation, chat-mio, reply or push) and pushing notifications.
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
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// ChatRequest is one inbound event for chat-mio.
type ChatRequest = chatlink.Request

// ChatResponse is chat-mio's answer.
type ChatResponse = chatlink.Response

// Chat is chat-mio. Errors that retrying cannot fix wrap domain.ErrPermanent.
type Chat interface {
	HandleMessage(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// Messenger is the LINE Messaging API.
type Messenger interface {
	Reply(ctx context.Context, replyToken string, msgs []domain.OutMessage) error
	Push(ctx context.Context, to string, msgs []domain.OutMessage, retryKey string) error
	ShowLoading(ctx context.Context, chatID string, seconds int) error
}

// Config tunes the processor.
type Config struct {
	// ReplyTokenMargin: the reply token is used only while the event is younger than this.
	ReplyTokenMargin time.Duration
	// LoadingSeconds is how long the loading animation runs at most (LINE stops it at the reply).
	LoadingSeconds int
	Locale         string
	Allow          domain.Allowlist
	// Now defaults to time.Now.
	Now func() time.Time
}

// Processor handles stored LINE events.
type Processor struct {
	cfg    Config
	texts  domain.Texts
	chat   Chat
	line   Messenger
	log    *slog.Logger
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewProcessor wires a processor.
func NewProcessor(cfg Config, chat Chat, line Messenger, log *slog.Logger, tp trace.TracerProvider, prop propagation.TextMapPropagator) *Processor {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Processor{cfg: cfg, texts: domain.TextsFor(cfg.Locale), chat: chat, line: line, log: log,
		tracer: tp.Tracer("gateway-line"), prop: prop}
}

// Handle processes one stored event; a nil error lets the inbox acknowledge it.
func (p *Processor) Handle(ctx context.Context, d inbox.Delivery) (err error) {
	ctx = p.prop.Extract(ctx, propagation.MapCarrier(d.Meta))
	ctx, span := p.tracer.Start(ctx, "line.event", trace.WithAttributes(
		attribute.String("line.event_id", d.ID), attribute.Bool("redelivered", d.Redelivered), attribute.Int("attempt", d.Attempt)))
	defer func() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "event failed")
		}
		span.End()
	}()
	in, err := domain.DecodeInbound(d.Payload)
	if err != nil {
		return inbox.Permanent(err)
	}
	log := p.log.With(slog.String("event_id", in.EventID), slog.String("kind", string(in.Kind)))
	if in.Kind == domain.KindUnfollow {
		log.InfoContext(ctx, "line.unfollow", slog.String("user_id", in.UserID))
		return nil
	}
	if !p.cfg.Allow.Allowed(in.UserID) {
		log.WarnContext(ctx, "line.sender_refused", slog.String("user_id", in.UserID))
		return p.send(ctx, in, d, "refusal:", []domain.OutMessage{{Text: p.texts.Refusal}})
	}
	if in.Kind == domain.KindFollow {
		return p.send(ctx, in, d, "welcome:", []domain.OutMessage{{Text: p.texts.Welcome}})
	}
	req := ChatRequest{
		SessionID: in.SessionID(), UserID: in.UserID, Text: in.Text, EventID: in.EventID,
		ReceivedAt: in.Timestamp, Locale: p.cfg.Locale, IsGroup: in.IsGroup(),
	}
	if in.Kind == domain.KindPostback {
		a, perr := domain.DecodePostback(in.PostbackData)
		if perr != nil {
			log.WarnContext(ctx, "line.postback_ignored", slog.Any("error", perr))
			return nil
		}
		req.Action = &a
		ctx = jobid.WithJobID(ctx, a.JobID)
	}
	if !in.IsGroup() {
		// Best effort: the answer matters, the animation does not.
		if lerr := p.line.ShowLoading(ctx, in.ChatID, p.cfg.LoadingSeconds); lerr != nil {
			log.WarnContext(ctx, "line.loading_failed", slog.Any("error", lerr))
		}
	}
	res, err := p.chat.HandleMessage(ctx, req)
	if err != nil {
		if errors.Is(err, domain.ErrPermanent) {
			return inbox.Permanent(fmt.Errorf("chat-mio: %w", err))
		}
		return fmt.Errorf("chat-mio: %w", err)
	}
	if res.JobID != "" {
		ctx = jobid.WithJobID(ctx, res.JobID)
		span.SetAttributes(attribute.String(jobid.BaggageKey, res.JobID))
	}
	stampTrace(ctx, res.Replies)
	msgs := domain.Compose(res.Replies, p.texts)
	log.InfoContext(ctx, "line.answered", slog.Int("messages", len(msgs)), slog.Bool("async_pending", res.AsyncPending))
	if len(msgs) == 0 {
		return nil
	}
	return p.send(ctx, in, d, "event:", msgs)
}

// send answers an event: with the reply token while it is valid, otherwise (or when LINE refuses
// the token) with a push whose retry key is derived from the event, so every retry of this
// answer — in this process or after a restart — is delivered at most once.
func (p *Processor) send(ctx context.Context, in domain.Inbound, d inbox.Delivery, purpose string, msgs []domain.OutMessage) error {
	if domain.UseReplyToken(in, d.Redelivered, d.Attempt, p.cfg.Now(), p.cfg.ReplyTokenMargin) {
		err := p.line.Reply(ctx, in.ReplyToken, msgs)
		if err == nil {
			p.log.DebugContext(ctx, "line.replied", slog.String("event_id", in.EventID))
			return nil
		}
		p.log.WarnContext(ctx, "line.reply_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
	}
	key := domain.RetryKey(purpose + in.EventID)
	if err := p.line.Push(ctx, in.ChatID, msgs, key); err != nil {
		if errors.Is(err, domain.ErrPermanent) {
			return inbox.Permanent(err)
		}
		return err
	}
	p.log.InfoContext(ctx, "line.pushed", slog.String("event_id", in.EventID), slog.String("retry_key", key))
	return nil
}

// GiveUp tells the user their message could not be handled (the event goes to the dead letters).
func (p *Processor) GiveUp(ctx context.Context, d inbox.Delivery, cause error) {
	in, err := domain.DecodeInbound(d.Payload)
	if err != nil || in.Kind == domain.KindUnfollow || !p.cfg.Allow.Allowed(in.UserID) {
		return
	}
	msgs := []domain.OutMessage{{Text: p.texts.Failure}}
	if err := p.line.Push(ctx, in.ChatID, msgs, domain.RetryKey("failure:"+in.EventID)); err != nil {
		p.log.ErrorContext(ctx, "line.failure_notice_failed", slog.String("event_id", in.EventID),
			slog.Any("cause", cause), slog.Any("error", err))
	}
}

// Notify pushes messages to a LINE session (late results, alerts). The retry key makes repeated
// calls with the same key deliver once; without one, the key is derived from the content.
func (p *Processor) Notify(ctx context.Context, sessionID, jobID, retryKey string, replies []domain.Reply) (int, error) {
	to, ok := strings.CutPrefix(sessionID, "line:")
	if !ok || to == "" {
		return 0, fmt.Errorf("%w: session %q is not a LINE session", domain.ErrInvalid, sessionID)
	}
	if jobID != "" {
		ctx = jobid.WithJobID(ctx, jobID)
	}
	stampTrace(ctx, replies)
	msgs := domain.Compose(replies, p.texts)
	if len(msgs) == 0 {
		return 0, fmt.Errorf("%w: nothing to send", domain.ErrInvalid)
	}
	if retryKey == "" {
		parts := []string{sessionID, jobID}
		for _, r := range replies {
			parts = append(parts, r.Text)
		}
		retryKey = domain.ContentKey(parts...)
	} else {
		retryKey = "notify:" + retryKey
	}
	key := domain.RetryKey(retryKey)
	if err := p.line.Push(ctx, to, msgs, key); err != nil {
		return 0, err
	}
	p.log.InfoContext(ctx, "line.notified", slog.String("session_id", sessionID), slog.Int("messages", len(msgs)))
	return len(msgs), nil
}

// stampTrace puts the current trace into the replies' buttons: a press arrives as a new webhook,
// and carrying the traceparent lets its processing continue this job's trace.
func stampTrace(ctx context.Context, replies []domain.Reply) {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	tp := carrier.Get("traceparent")
	if tp == "" {
		return
	}
	for i := range replies {
		for j := range replies[i].Actions {
			replies[i].Actions[j].Trace = tp
		}
	}
}
