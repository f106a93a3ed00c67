// Package app holds the Slack gateway's use cases: processing a stored event (allowlist,
// chat-mio, thread replies, closing buttons) and pushing notifications.
package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

// ChatRequest is one inbound event for chat-mio.
type ChatRequest = chatlink.Request

// ChatResponse is chat-mio's answer.
type ChatResponse = chatlink.Response

// Chat is chat-mio. Errors that retrying cannot fix wrap domain.ErrPermanent.
type Chat interface {
	HandleMessage(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// Slack is the Web API.
type Slack interface {
	Post(ctx context.Context, channel, threadTS string, msg domain.OutMessage) (string, error)
	CloseButtons(ctx context.Context, channel, ts, text, note string) error
}

// Marks remembers sends that went out (inbox.Marks), so a retried event or notification
// never posts the same message twice: Slack has no idempotency key of its own.
type Marks interface {
	Done(ctx context.Context, key string) (bool, error)
	Mark(ctx context.Context, key string) error
}

// Config tunes the processor.
type Config struct {
	Locale string
	Allow  domain.Allowlist
}

// Processor handles stored Slack events.
type Processor struct {
	cfg    Config
	texts  domain.Texts
	chat   Chat
	slack  Slack
	marks  Marks
	log    *slog.Logger
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewProcessor wires a processor.
func NewProcessor(cfg Config, chat Chat, slack Slack, marks Marks, log *slog.Logger, tp trace.TracerProvider, prop propagation.TextMapPropagator) *Processor {
	return &Processor{cfg: cfg, texts: domain.TextsFor(cfg.Locale), chat: chat, slack: slack, marks: marks, log: log,
		tracer: tp.Tracer("gateway-slack"), prop: prop}
}

// Handle processes one stored event; a nil error lets the inbox acknowledge it.
func (p *Processor) Handle(ctx context.Context, d inbox.Delivery) (err error) {
	ctx = p.prop.Extract(ctx, propagation.MapCarrier(d.Meta))
	ctx, span := p.tracer.Start(ctx, "slack.event", trace.WithAttributes(
		attribute.String("slack.event_id", d.ID), attribute.Bool("redelivered", d.Redelivered), attribute.Int("attempt", d.Attempt)))
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
	if !p.cfg.Allow.Allowed(in.UserID) {
		log.WarnContext(ctx, "slack.sender_refused", slog.String("user_id", in.UserID))
		return p.post(ctx, "refusal:"+in.EventID, in.Channel, in.ThreadTS, []domain.OutMessage{{Text: p.texts.Refusal}})
	}
	req := ChatRequest{
		SessionID: in.SessionID(), UserID: in.UserID, Text: in.Text, Action: in.Action, EventID: in.EventID,
		ReceivedAt: time.Now(), Locale: p.cfg.Locale, IsGroup: !in.IsDM,
	}
	if in.Action != nil {
		ctx = jobid.WithJobID(ctx, in.Action.JobID)
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
	if in.Kind == domain.KindAction && in.MessageTS != "" {
		// The decision was taken: the buttons go, so nobody presses them again.
		if err := p.once(ctx, "close:"+in.EventID, func() error {
			return p.slack.CloseButtons(ctx, in.Channel, in.MessageTS, in.MessageText, p.texts.DecidedNote(in.UserID, *in.Action))
		}); err != nil {
			if !errors.Is(err, domain.ErrPermanent) {
				return err
			}
			log.WarnContext(ctx, "slack.close_buttons_failed", slog.Any("error", err))
		}
	}
	stampTrace(ctx, res.Replies)
	msgs := domain.Compose(res.Replies, p.texts)
	log.InfoContext(ctx, "slack.answered", slog.Int("messages", len(msgs)), slog.Bool("async_pending", res.AsyncPending))
	return p.post(ctx, "event:"+in.EventID, in.Channel, in.ThreadTS, msgs)
}

// post sends msgs in order; each message is marked once sent, so a retry resumes after it.
func (p *Processor) post(ctx context.Context, key, channel, threadTS string, msgs []domain.OutMessage) error {
	for i, m := range msgs {
		err := p.once(ctx, key+":"+strconv.Itoa(i), func() error {
			_, err := p.slack.Post(ctx, channel, threadTS, m)
			return err
		})
		if err != nil {
			if errors.Is(err, domain.ErrPermanent) {
				return inbox.Permanent(err)
			}
			return err
		}
	}
	return nil
}

func (p *Processor) once(ctx context.Context, key string, send func() error) error {
	done, err := p.marks.Done(ctx, key)
	if err != nil {
		return fmt.Errorf("check sent %s: %w", key, err)
	}
	if done {
		p.log.InfoContext(ctx, "slack.already_sent", slog.String("key", key))
		return nil
	}
	if err := send(); err != nil {
		return err
	}
	if err := p.marks.Mark(ctx, key); err != nil {
		// Sent but not remembered: a retry could repeat it, which is better than losing it.
		p.log.WarnContext(ctx, "slack.mark_failed", slog.String("key", key), slog.Any("error", err))
	}
	return nil
}

// GiveUp tells the user their message could not be handled.
func (p *Processor) GiveUp(ctx context.Context, d inbox.Delivery, cause error) {
	in, err := domain.DecodeInbound(d.Payload)
	if err != nil || !p.cfg.Allow.Allowed(in.UserID) {
		return
	}
	if err := p.post(ctx, "failure:"+in.EventID, in.Channel, in.ThreadTS, []domain.OutMessage{{Text: p.texts.Failure}}); err != nil {
		p.log.ErrorContext(ctx, "slack.failure_notice_failed", slog.String("event_id", in.EventID),
			slog.Any("cause", cause), slog.Any("error", err))
	}
}

// Notify posts messages to a Slack session (late results, alerts). Repeated calls with the same
// retry key post once; without a key, the key is derived from the content.
func (p *Processor) Notify(ctx context.Context, sessionID, jobID, retryKey string, replies []domain.Reply) (int, error) {
	channel, thread, err := domain.ParseSession(sessionID)
	if err != nil {
		return 0, err
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
		h := sha256.New()
		for _, s := range []string{sessionID, jobID} {
			h.Write([]byte(s + "\x00"))
		}
		for _, r := range replies {
			h.Write([]byte(r.Text + "\x00"))
		}
		retryKey = "content-" + hex.EncodeToString(h.Sum(nil))
	}
	if err := p.post(ctx, "notify:"+retryKey, channel, thread, msgs); err != nil {
		return 0, err
	}
	p.log.InfoContext(ctx, "slack.notified", slog.String("session_id", sessionID), slog.Int("messages", len(msgs)))
	return len(msgs), nil
}

// stampTrace puts the current trace into the replies' buttons: a press arrives as a new request,
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
