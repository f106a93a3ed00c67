// Package httpapi is Slack's inbound side: the Events API and interactivity endpoints. Both
// check the signing secret over the raw body within the 5-minute window, store what the gateway
// handles (deduplicated by event id) and only then answer 200.
package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

// BotUser returns the bot's own user id ("" while unknown); its messages are ignored.
type BotUser func() string

// Handlers serves /slack/events and /slack/interactive.
type Handlers struct {
	secret string
	ingest *channel.Ingester
	bot    BotUser
	log    *slog.Logger
}

// New returns the handlers; secret is the signing secret.
func New(secret string, ingest *channel.Ingester, bot BotUser, log *slog.Logger) *Handlers {
	return &Handlers{secret: secret, ingest: ingest, bot: bot, log: log}
}

// verified reads the body and checks X-Slack-Signature and X-Slack-Request-Timestamp; on failure
// it has answered already (401, or 413 for an oversized body).
func (h *Handlers) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	ctx := r.Context()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.log.WarnContext(ctx, "slack.request_rejected", slog.String("reason", "body_too_large"))
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, h.secret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		reason := "bad_signature"
		if errors.Is(err, slack.ErrExpiredTimestamp) {
			reason = "stale_timestamp"
		}
		h.log.WarnContext(ctx, "slack.request_rejected", slog.String("reason", reason))
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// Events serves the Events API.
func (h *Handlers) Events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	body, ok := h.verified(w, r)
	if !ok {
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		// An event type the SDK does not know is still a valid delivery: acknowledge it, or
		// Slack retries it and eventually disables the subscription.
		if typ, ok := unknownCallback(body); ok {
			h.log.InfoContext(ctx, "slack.event_ignored", slog.String("type", typ))
			w.WriteHeader(http.StatusOK)
			return
		}
		h.log.WarnContext(ctx, "slack.event_unparsable", slog.String("error", channel.ClipError(err)))
		http.Error(w, "invalid event", http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		uv, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if !ok {
			http.Error(w, "invalid event", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, uv.Challenge)
		return
	case slackevents.CallbackEvent:
	default:
		h.log.InfoContext(ctx, "slack.event_ignored", slog.String("type", ev.Type))
		w.WriteHeader(http.StatusOK)
		return
	}
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || cb.EventID == "" {
		http.Error(w, "invalid event", http.StatusBadRequest)
		return
	}
	if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
		h.log.InfoContext(ctx, "slack.retry", slog.String("event_id", cb.EventID), slog.String("retry_num", n),
			slog.String("reason", r.Header.Get("X-Slack-Retry-Reason")))
	}
	in, keep := Normalize(cb.EventID, ev.TeamID, ev.InnerEvent, h.bot())
	if !keep {
		h.log.InfoContext(ctx, "slack.event_ignored", slog.String("event_id", cb.EventID), slog.String("type", ev.InnerEvent.Type))
		w.WriteHeader(http.StatusOK)
		return
	}
	h.store200(w, r, in)
}

// Normalize keeps app_mention and direct messages from people; bot messages (this bot's too),
// edits, joins and other subtypes are ignored.
func Normalize(eventID, teamID string, inner slackevents.EventsAPIInnerEvent, botUserID string) (domain.Inbound, bool) {
	in := domain.Inbound{EventID: eventID, Kind: domain.KindMessage, TeamID: teamID}
	switch e := inner.Data.(type) {
	case *slackevents.AppMentionEvent:
		if e.BotID != "" || e.User == "" || e.User == botUserID {
			return in, false
		}
		in.Channel, in.UserID, in.Text = e.Channel, e.User, domain.StripMention(e.Text, botUserID)
		withFile(&in, e.Files)
		in.ThreadTS = e.ThreadTimeStamp
		if in.ThreadTS == "" {
			in.ThreadTS = e.TimeStamp
		}
	case *slackevents.MessageEvent:
		// file_share is a message with files attached (the image path); other subtypes are not
		// messages from a person.
		if e.ChannelType != "im" || (e.SubType != "" && e.SubType != "file_share") || e.BotID != "" || e.User == "" || e.User == botUserID {
			return in, false
		}
		in.Channel, in.UserID, in.Text, in.IsDM = e.Channel, e.User, e.Text, true
		if e.Message != nil {
			withFile(&in, e.Message.Files)
		}
		in.ThreadTS = e.ThreadTimeStamp
		if in.ThreadTS == "" {
			in.ThreadTS = e.TimeStamp
		}
	default:
		return in, false
	}
	return in, in.Channel != "" && in.ThreadTS != ""
}

// withFile makes a message that shares files an image event (its first file, when that is an
// image) or an unsupported one (another kind of file). The text stays as the caption.
func withFile(in *domain.Inbound, files []slack.File) {
	if len(files) == 0 {
		return
	}
	f := files[0]
	if !strings.HasPrefix(f.Mimetype, "image/") || f.URLPrivateDownload == "" || f.IsExternal {
		in.Kind, in.Text = domain.KindUnsupported, "file:"+f.Filetype
		return
	}
	in.Kind = domain.KindImage
	in.File = &domain.File{ID: f.ID, Name: f.Name, Mimetype: f.Mimetype, Size: int64(f.Size), URL: f.URLPrivateDownload}
}

// Interactive serves interactivity: block_actions button presses.
func (h *Handlers) Interactive(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	body, ok := h.verified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "invalid payload", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		h.log.WarnContext(ctx, "slack.interaction_unparsable", slog.String("error", channel.ClipError(err)))
		http.Error(w, "invalid payload", http.StatusBadRequest)
		return
	}
	in, keep := NormalizeAction(cb, h.bot())
	if !keep {
		h.log.InfoContext(ctx, "slack.interaction_ignored", slog.String("type", string(cb.Type)))
		w.WriteHeader(http.StatusOK)
		return
	}
	h.store200(w, r, in)
}

// NormalizeAction keeps approve/deny/pick button presses on messages in a channel, by people:
// a press in the name of the bot itself (botUserID, from auth.test or slack.bot_user_id) is
// ignored like its own messages — the bot never decides a job.
func NormalizeAction(cb slack.InteractionCallback, botUserID string) (domain.Inbound, bool) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		return domain.Inbound{}, false
	}
	if botUserID != "" && cb.User.ID == botUserID {
		return domain.Inbound{}, false
	}
	ba := cb.ActionCallback.BlockActions[0]
	a, err := domain.ParseButton(ba.ActionID, ba.Value)
	if err != nil {
		return domain.Inbound{}, false
	}
	msgTS := cb.Message.Timestamp
	if msgTS == "" {
		msgTS = cb.Container.MessageTs
	}
	thread := cb.Message.ThreadTimestamp
	if thread == "" {
		thread = msgTS
	}
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	// A press has no event id; trigger_id is unique per interaction and stable across retries.
	id := cb.TriggerID
	if id == "" {
		id = ba.ActionTs + ":" + cb.User.ID
	}
	in := domain.Inbound{
		EventID: "action:" + id, Kind: domain.KindAction, TeamID: cb.Team.ID, Channel: channel, ThreadTS: thread,
		UserID: cb.User.ID, Action: &a, MessageTS: msgTS, MessageText: cb.Message.Text,
		IsDM: len(channel) > 0 && channel[0] == 'D',
	}
	return in, channel != "" && thread != "" && in.UserID != ""
}

func (h *Handlers) store200(w http.ResponseWriter, r *http.Request, in domain.Inbound) {
	ctx := r.Context()
	payload, err := in.Encode()
	if err != nil {
		h.log.ErrorContext(ctx, "slack.event_encode_failed", slog.Any("error", err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	inc := channel.Incoming{ID: in.EventID, Key: in.Key(), Payload: payload,
		StartsJob: in.Kind == domain.KindMessage || in.Kind == domain.KindImage, Action: in.Action, Text: in.Text}
	if in.Kind != domain.KindMessage {
		// An image's caption is a question about the picture, never a command about a job.
		inc.Text = ""
	}
	res, err := h.ingest.Store(ctx, inc)
	if err != nil {
		// Not stored: a 503 makes Slack retry; the retry is deduplicated if this one got through.
		channel.NotStored(w)
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("slack.event_id", in.EventID),
		attribute.Bool("slack.duplicate", res.Duplicate > 0))
	h.log.InfoContext(ctx, "slack.event_stored", slog.String("event_id", in.EventID), slog.Bool("duplicate", res.Duplicate > 0),
		slog.String("kind", string(in.Kind)), slog.String("thread", strconv.Quote(in.Key())))
	w.WriteHeader(http.StatusOK)
}

// unknownCallback reports whether body is a well-formed event_callback envelope (with an
// event id and an inner event type) whose inner type the SDK cannot parse.
func unknownCallback(body []byte) (string, bool) {
	var env struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Event   struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if json.Unmarshal(body, &env) != nil || env.Type != slackevents.CallbackEvent || env.EventID == "" || env.Event.Type == "" {
		return "", false
	}
	return env.Event.Type, true
}
