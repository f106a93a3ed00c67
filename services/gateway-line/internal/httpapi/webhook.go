// Package httpapi is the LINE webhook: verify the signature, keep the events the gateway handles,
// store them durably (deduplicated) and only then answer 200.
package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Webhook serves POST /line/webhook.
type Webhook struct {
	secret string
	ingest *channel.Ingester
	log    *slog.Logger
	// mentionOnly: group and room text messages are stored only when they mention the bot.
	mentionOnly bool
}

// MentionOnlyInGroups makes the webhook keep a group's or room's text message only when it
// mentions the bot (line.group_mention_only).
func (h *Webhook) MentionOnlyInGroups(on bool) *Webhook {
	h.mentionOnly = on
	return h
}

// NewWebhook returns the handler; secret is the channel secret.
func NewWebhook(secret string, ingest *channel.Ingester, log *slog.Logger) *Webhook {
	return &Webhook{secret: secret, ingest: ingest, log: log}
}

func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The (size-capped) body is read and X-Line-Signature checked before anything is parsed.
	cb, err := parseRequest(h.secret, r)
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
			h.log.WarnContext(ctx, "line.webhook_rejected", slog.String("reason", "bad_body"), slog.String("error", channel.ClipError(err)))
			http.Error(w, "invalid body", http.StatusBadRequest)
		}
		return
	}
	events := make([]channel.Incoming, 0, len(cb.Events))
	for _, e := range cb.Events {
		in, ok := Normalize(e)
		if !ok {
			h.log.InfoContext(ctx, "line.event_ignored", slog.String("type", e.GetType()))
			continue
		}
		// The destination is the bot's own user ID: what the bot itself sent or pressed is
		// never a message to answer nor a decision about a job.
		if in.UserID != "" && in.UserID == cb.Destination {
			h.log.InfoContext(ctx, "line.event_ignored", slog.String("type", e.GetType()), slog.String("reason", "own_event"))
			continue
		}
		// Only a text message can mention the bot: in a mention-only group an image, a sticker
		// or a file is never for the bot (README, "Groups and the bot's own events").
		if h.mentionOnly && in.SourceType != domain.SourceUser && in.Kind != domain.KindPostback && !in.Mentioned {
			h.log.InfoContext(ctx, "line.group_message_ignored", slog.String("reason", "not_mentioned"))
			continue
		}
		payload, err := in.Encode()
		if err != nil {
			h.log.ErrorContext(ctx, "line.event_encode_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
			continue
		}
		inc := channel.Incoming{ID: in.EventID, Key: in.ChatID, Payload: payload, StartsJob: in.Kind == domain.KindText || in.Kind == domain.KindImage, Text: in.Text}
		if in.Kind == domain.KindPostback {
			if a, err := domain.DecodePostback(in.PostbackData); err == nil {
				inc.Action = &a
			}
		}
		events = append(events, inc)
	}
	// Not stored: answer 503 so LINE redelivers; what was stored is deduplicated then.
	res, err := h.ingest.Store(ctx, events...)
	if err != nil {
		channel.NotStored(w)
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("line.events", len(cb.Events)),
		attribute.Int("line.stored", res.Stored), attribute.Int("line.duplicates", res.Duplicate))
	h.log.InfoContext(ctx, "line.webhook", slog.Int("events", len(cb.Events)), slog.Int("stored", res.Stored),
		slog.Int("duplicates", res.Duplicate))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// Normalize keeps the events the gateway handles in active mode: text and image messages,
// postbacks, follow and unfollow, and the other messages (stickers, audio, …), which are
// answered with what is supported. Everything else (joins, standby mode, …) is ignored.
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
		if text, ok := ev.Message.(webhook.TextMessageContent); ok {
			mentioned, rest := withoutSelfMention(text.Text, text.Mention)
			in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindText, Text: rest, ReplyToken: ev.ReplyToken,
				Mentioned: mentioned}
		} else if img, ok := ev.Message.(webhook.ImageMessageContent); ok {
			// Stored by reference: the bytes are fetched when the event is processed.
			in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindImage, ReplyToken: ev.ReplyToken, MessageID: img.Id,
				ContentProvider: "line"}
			if img.ContentProvider != nil && img.ContentProvider.Type != "" {
				in.ContentProvider = string(img.ContentProvider.Type)
			}
		} else if ev.Message != nil {
			// Told what is supported rather than met with silence.
			in = domain.Inbound{EventID: ev.WebhookEventId, Kind: domain.KindUnsupported, Text: ev.Message.GetType(), ReplyToken: ev.ReplyToken}
		} else {
			return in, false
		}
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

// withoutSelfMention reports whether a message mentions the bot itself and returns the text
// without that mention ("@Mio /auto-approve off" → "/auto-approve off"), so a command typed in a
// group is still a command. LINE gives the mention's place in UTF-16 code units.
func withoutSelfMention(text string, m *webhook.Mention) (bool, string) {
	if m == nil {
		return false, text
	}
	for _, x := range m.Mentionees {
		u, ok := x.(webhook.UserMentionee)
		if !ok || !u.IsSelf {
			continue
		}
		units := utf16.Encode([]rune(text))
		start, end := int(u.Index), int(u.Index+u.Length)
		if start < 0 || end > len(units) || start > end {
			return true, text
		}
		rest := append(append([]uint16(nil), units[:start]...), units[end:]...)
		return true, strings.TrimSpace(string(utf16.Decode(rest)))
	}
	return false, text
}
