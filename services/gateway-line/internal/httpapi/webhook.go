// Package httpapi is the LINE webhook: verify the signature, keep the events the gateway handles,
// store them durably (deduplicated) and only then answer 200.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Appender stores events (inbox.Store).
type Appender interface {
	Append(ctx context.Context, events ...inbox.Event) (inbox.Result, error)
}

// Webhook serves POST /line/webhook.
type Webhook struct {
	secret string
	store  Appender
	log    *slog.Logger
	prop   propagation.TextMapPropagator
}

// NewWebhook returns the handler; secret is the channel secret.
func NewWebhook(secret string, store Appender, log *slog.Logger, prop propagation.TextMapPropagator) *Webhook {
	return &Webhook{secret: secret, store: store, log: log, prop: prop}
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
	meta := propagation.MapCarrier{}
	h.prop.Inject(ctx, meta)
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
