// Package httpapi is the LINE webhook: verify the signature, keep the events the gateway handles,
// store them durably (deduplicated) and only then answer 200.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Appender stores events (inbox.Store).
type Appender interface {
	Append(ctx context.Context, events ...inbox.Event) (inbox.Result, error)
}

// JobIDs allocates JobIDs (jobid.Allocator on the suite's Redis, shared with chat-mio).
type JobIDs interface {
	Next(ctx context.Context) (string, error)
}

// Webhook serves POST /line/webhook.
type Webhook struct {
	secret string
	store  Appender
	jobs   JobIDs
	log    *slog.Logger
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewWebhook returns the handler; secret is the channel secret.
func NewWebhook(secret string, store Appender, jobs JobIDs, log *slog.Logger, tp trace.TracerProvider, prop propagation.TextMapPropagator) *Webhook {
	return &Webhook{secret: secret, store: store, jobs: jobs, log: log, tracer: tp.Tracer("gateway-line"), prop: prop}
}

func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The SDK reads the (size-capped) body and checks X-Line-Signature before parsing anything.
	cb, err := webhook.ParseRequest(h.secret, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			h.log.WarnContext(ctx, "line.webhook_rejected", slog.String("reason", "body_too_large"))
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		case errors.Is(err, webhook.ErrInvalidSignature):
			h.log.WarnContext(ctx, "line.webhook_rejected", slog.String("reason", "bad_signature"))
			http.Error(w, "invalid signature", http.StatusBadRequest)
		default:
			h.log.WarnContext(ctx, "line.webhook_rejected", slog.String("reason", "bad_body"), slog.Any("error", err))
			http.Error(w, "invalid body", http.StatusBadRequest)
		}
		return
	}
	events := make([]inbox.Event, 0, len(cb.Events))
	for _, e := range cb.Events {
		in, ok := Normalize(e)
		if !ok {
			h.log.InfoContext(ctx, "line.event_ignored", slog.String("type", e.GetType()))
			continue
		}
		payload, err := in.Encode()
		if err != nil {
			h.log.ErrorContext(ctx, "line.event_encode_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
			continue
		}
		meta, err := h.eventMeta(ctx, in)
		if err != nil {
			h.log.ErrorContext(ctx, "line.jobid_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
			http.Error(w, "temporarily unavailable", http.StatusInternalServerError)
			return
		}
		events = append(events, inbox.Event{ID: in.EventID, Key: in.ChatID, Payload: payload, Meta: meta})
	}
	res, err := h.store.Append(ctx, events...)
	if err != nil {
		// Not stored: answer 500 so LINE redelivers; what was stored is deduplicated then.
		h.log.ErrorContext(ctx, "line.webhook_store_failed", slog.Any("error", err))
		http.Error(w, "temporarily unavailable", http.StatusInternalServerError)
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("line.events", len(cb.Events)),
		attribute.Int("line.stored", res.Stored), attribute.Int("line.duplicates", res.Duplicate))
	h.log.InfoContext(ctx, "line.webhook", slog.Int("events", len(cb.Events)), slog.Int("stored", res.Stored),
		slog.Int("duplicates", res.Duplicate))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// eventMeta is the trace context an event is processed in. A text message starts a job: its
// JobID is allocated here, before any downstream call, and it gets a trace of its own (linked to
// this request), so one trace covers one job. A button press continues the trace its button
// carries, with the pressed job's id. Other events follow this request's trace.
func (h *Webhook) eventMeta(ctx context.Context, in domain.Inbound) (map[string]string, error) {
	meta := propagation.MapCarrier{}
	opts := []trace.SpanStartOption{trace.WithLinks(trace.LinkFromContext(ctx)),
		trace.WithAttributes(attribute.String("line.event_id", in.EventID))}
	var id string
	parent := ctx
	switch in.Kind {
	case domain.KindText:
		next, err := h.jobs.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("allocate job id: %w", err)
		}
		id = next
		opts = append(opts, trace.WithNewRoot())
	case domain.KindPostback:
		a, err := domain.DecodePostback(in.PostbackData)
		if err != nil || !jobid.Valid(a.JobID) {
			// The processor logs and ignores it.
			h.prop.Inject(ctx, meta)
			return meta, nil
		}
		id = a.JobID
		parent = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": a.Trace})
		if !trace.SpanContextFromContext(parent).IsRemote() {
			opts = append(opts, trace.WithNewRoot())
		}
	default:
		h.prop.Inject(ctx, meta)
		return meta, nil
	}
	jctx, span := h.tracer.Start(jobid.WithJobID(parent, id), "line.receive", opts...)
	h.prop.Inject(jctx, meta)
	span.End()
	return meta, nil
}

// Normalize keeps the events the gateway handles: text messages, postbacks, follow and unfollow
// in active mode. Everything else (stickers, images, joins, standby mode, …) is ignored.
func Normalize(e webhook.EventInterface) (domain.Inbound, bool) {
	var (
		in       domain.Inbound
		source   webhook.SourceInterface
		ts       int64
		mode     webhook.EventMode
		delivery *webhook.DeliveryContext
	)
	switch ev := e.(type) {
	case webhook.MessageEvent:
		text, ok := ev.Message.(webhook.TextMessageContent)
		if !ok {
			return in, false
		}
		in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindText, Text: text.Text, ReplyToken: ev.ReplyToken}
		source, ts, mode, delivery = ev.Source, ev.Timestamp, ev.Mode, ev.DeliveryContext
	case webhook.PostbackEvent:
		if ev.Postback == nil {
			return in, false
		}
		in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindPostback, PostbackData: ev.Postback.Data, ReplyToken: ev.ReplyToken}
		source, ts, mode, delivery = ev.Source, ev.Timestamp, ev.Mode, ev.DeliveryContext
	case webhook.FollowEvent:
		in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindFollow, ReplyToken: ev.ReplyToken}
		source, ts, mode, delivery = ev.Source, ev.Timestamp, ev.Mode, ev.DeliveryContext
	case webhook.UnfollowEvent:
		in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindUnfollow}
		source, ts, mode, delivery = ev.Source, ev.Timestamp, ev.Mode, ev.DeliveryContext
	default:
		return in, false
	}
	if mode == webhook.EventMode_STANDBY || in.EventID == "" {
		return in, false
	}
	switch s := source.(type) {
	case webhook.UserSource:
		in.SourceType, in.UserID, in.ChatID = domain.SourceUser, s.UserId, s.UserId
	case webhook.GroupSource:
		in.SourceType, in.UserID, in.ChatID = domain.SourceGroup, s.UserId, s.GroupId
	case webhook.RoomSource:
		in.SourceType, in.UserID, in.ChatID = domain.SourceRoom, s.UserId, s.RoomId
	default:
		return in, false
	}
	if in.ChatID == "" {
		return in, false
	}
	in.Timestamp = time.UnixMilli(ts)
	in.Redelivery = delivery != nil && delivery.IsRedelivery
	return in, true
}
