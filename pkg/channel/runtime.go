package channel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Chat is chat-mio (chatclient.Client). Errors that retrying cannot fix wrap ErrPermanent.
type Chat interface {
	HandleMessage(ctx context.Context, req chatlink.Request) (chatlink.Response, error)
}

// RuntimeConfig tunes a runtime.
type RuntimeConfig struct {
	Locale string
	Allow  Allowlist
	// Tracer names the spans' instrumentation scope (the service name).
	Tracer string
	// Outbox, when set, stores every reply and notification before it is sent; the outbox
	// consumer sends them (Deliver). Without one (the terminal) they are sent at once.
	Outbox Appender
	// MaxImageBytes caps an image the channel fetches (images.max_bytes; default 10 MiB).
	MaxImageBytes int64
	// Metrics counts the sends (nil: not counted).
	Metrics *SendMetrics
}

// Runtime processes a channel's events: allowlist, chat-mio, replies; and its notifications.
type Runtime struct {
	ch     Channel
	name   string
	cfg    RuntimeConfig
	texts  chatlink.Texts
	chat   Chat
	log    *slog.Logger
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	// directOff is when answers may be sent directly again (unix ns; see sendFirst).
	directOff atomic.Int64
	// direct are the sessions whose answer is being sent directly (beginDirect).
	directMu sync.Mutex
	direct   map[string]chan struct{}
}

// NewRuntime wires a runtime for ch.
func NewRuntime(ch Channel, cfg RuntimeConfig, chat Chat, log *slog.Logger, tp trace.TracerProvider, prop propagation.TextMapPropagator) *Runtime {
	if cfg.Tracer == "" {
		cfg.Tracer = ch.Name()
	}
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = config.DefaultImages().MaxBytes
	}
	return &Runtime{ch: ch, name: ch.Name(), cfg: cfg, texts: chatlink.TextsFor(cfg.Locale), chat: chat, log: log,
		tracer: tp.Tracer(cfg.Tracer), prop: prop}
}

// Handle processes one stored event (the inbox consumer's handler); a nil error lets the inbox
// acknowledge it.
func (r *Runtime) Handle(ctx context.Context, d inbox.Delivery) (err error) {
	ctx = r.prop.Extract(ctx, propagation.MapCarrier(d.Meta))
	ctx, span := r.tracer.Start(ctx, r.name+".event", trace.WithAttributes(
		attribute.String(r.name+".event_id", d.ID), attribute.Bool("redelivered", d.Redelivered), attribute.Int("attempt", d.Attempt)))
	defer func() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "event failed")
		}
		span.End()
	}()
	ev, err := r.ch.Decode(d.Payload)
	if err != nil {
		return inbox.Permanent(err)
	}
	return r.process(ctx, ev, d.Payload, Target{SessionID: ev.SessionID, Event: &ev, InReply: true, Redelivered: d.Redelivered, Attempt: d.Attempt})
}

// process answers one event (raw is its stored form): the allowlist first, then chat-mio, then
// the replies to to.
func (r *Runtime) process(ctx context.Context, ev Event, raw []byte, to Target) error {
	log := eventLog{r.log, []slog.Attr{slog.String("event_id", ev.ID), slog.String("kind", string(ev.Kind))}}
	if ev.Kind == KindUnfollow {
		log.log(ctx, slog.LevelInfo, r.name+".unfollow", slog.String("user_id", ev.UserID))
		return nil
	}
	if !r.cfg.Allow.Allowed(ev.UserID) {
		log.log(ctx, slog.LevelWarn, r.name+".sender_refused", slog.String("user_id", ev.UserID))
		_, _, err := r.deliver(ctx, to, raw, "refusal:"+ev.ID, outbound{Replies: Notice(r.texts.Refusal)})
		return err
	}
	if ev.Kind == KindFollow {
		_, _, err := r.deliver(ctx, to, raw, "welcome:"+ev.ID, outbound{Replies: Notice(r.texts.Welcome)})
		return err
	}
	if ev.Kind == KindUnsupported {
		log.log(ctx, slog.LevelInfo, r.name+".unsupported_message", slog.String("type", ev.Text))
		_, _, err := r.deliver(ctx, to, raw, "unsupported:"+ev.ID, outbound{Replies: Notice(r.texts.Unsupported)})
		return err
	}
	if ev.Ignore != nil {
		log.log(ctx, slog.LevelWarn, r.name+".action_ignored", slog.Any("error", ev.Ignore))
		return nil
	}
	if ev.Action != nil {
		ctx = jobid.WithJobID(ctx, ev.Action.JobID)
	}
	prepared := func() {}
	if p, ok := r.ch.(Preparer); ok {
		if done := p.BeforeChat(ctx, ev); done != nil {
			prepared = sync.OnceFunc(done)
			defer prepared()
		}
	}
	req := chatlink.Request{
		SessionID: ev.SessionID, UserID: ev.UserID, Text: ev.Text, Action: ev.Action, EventID: ev.ID,
		ReceivedAt: ev.ReceivedAt, Locale: r.cfg.Locale, IsGroup: ev.IsGroup,
	}
	if ev.Kind == KindImage {
		img, refusal, err := r.fetchImage(ctx, ev)
		if err != nil {
			return err
		}
		if refusal != "" {
			prepared()
			_, _, err := r.deliver(ctx, to, raw, "image:"+ev.ID, outbound{Replies: Notice(refusal)})
			return err
		}
		req.Image = &img
	}
	res, err := r.chat.HandleMessage(ctx, req)
	prepared()
	if err != nil {
		if errors.Is(err, ErrPermanent) {
			return inbox.Permanent(fmt.Errorf("chat-mio: %w", err))
		}
		return fmt.Errorf("chat-mio: %w", err)
	}
	if res.JobID != "" {
		ctx = jobid.WithJobID(ctx, res.JobID)
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(jobid.BaggageKey, res.JobID))
	}
	o := outbound{JobID: res.JobID, Replies: res.Replies}
	// A refused press (not an approver, already decided) leaves the buttons as they are.
	_, finishes := r.ch.(Finisher)
	o.Finish = finishes && ev.Kind == KindAction && res.ActionApplied
	stampTraceParent(ctx, res.Replies, res.TraceParent)
	// Why a press was refused is for the presser only; the conversation is left as it was.
	_, whispers := r.ch.(Whisperer)
	o.Private = whispers && ev.Kind == KindAction && !res.ActionApplied
	n, queued, err := r.deliver(ctx, to, raw, "event:"+ev.ID, o)
	if err != nil {
		return err
	}
	event := r.name + ".answered"
	if o.Private {
		event = r.name + ".answered_privately"
	}
	log.log(ctx, slog.LevelInfo, event, slog.Int("messages", n), slog.Bool("async_pending", res.AsyncPending), slog.Bool("queued", queued))
	return nil
}

// eventLog logs with an event's attributes first, as Logger.With would, without building a
// handler for each event.
type eventLog struct {
	l     *slog.Logger
	attrs []slog.Attr
}

func (e eventLog) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if !e.l.Enabled(ctx, level) {
		return
	}
	e.l.LogAttrs(ctx, level, msg, append(e.attrs[:len(e.attrs):len(e.attrs)], attrs...)...)
}

// GiveUp tells the user their message could not be handled (the event goes to the dead letters).
func (r *Runtime) GiveUp(ctx context.Context, d inbox.Delivery, cause error) {
	ev, err := r.ch.Decode(d.Payload)
	if err != nil || ev.Kind == KindUnfollow || !r.cfg.Allow.Allowed(ev.UserID) {
		return
	}
	to := Target{SessionID: ev.SessionID, Event: &ev, Redelivered: d.Redelivered, Attempt: d.Attempt}
	if _, _, err := r.deliver(ctx, to, d.Payload, "failure:"+ev.ID, outbound{Replies: Notice(r.texts.Failure)}); err != nil {
		r.log.ErrorContext(ctx, r.name+".failure_notice_failed", slog.String("event_id", ev.ID),
			slog.Any("cause", cause), slog.Any("error", err))
	}
}

// Notify delivers messages to a session (late results, alerts). Repeated calls with the same
// retry key deliver once; without a key, the key is derived from the content. With an outbox it
// returns once the messages are stored: the outbox sends them, retrying a channel that is down.
func (r *Runtime) Notify(ctx context.Context, sessionID, jobID, retryKey string, replies []chatlink.Reply) (int, error) {
	to, err := r.ch.Target(sessionID)
	if err != nil {
		return 0, err
	}
	to.SessionID = sessionID
	if jobID != "" {
		ctx = jobid.WithJobID(ctx, jobID)
	}
	if sendable(replies) == 0 {
		return 0, fmt.Errorf("%w: nothing to send", ErrInvalid)
	}
	StampTrace(ctx, replies)
	if retryKey == "" {
		parts := []string{sessionID, jobID}
		for _, rp := range replies {
			parts = append(parts, rp.Text)
			for _, im := range rp.Images {
				sum := sha256.Sum256(im.Data)
				parts = append(parts, hex.EncodeToString(sum[:]))
			}
		}
		retryKey = ContentKey(parts...)
	} else {
		retryKey = "notify:" + retryKey
	}
	n, queued, err := r.deliver(ctx, to, nil, retryKey, outbound{JobID: jobID, Replies: replies})
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: nothing to send", ErrInvalid)
	}
	r.log.InfoContext(ctx, r.name+".notified", slog.String("session_id", sessionID), slog.Int("messages", n),
		slog.Bool("queued", queued))
	return n, nil
}

// StampTrace puts the current trace into the replies' buttons: a press arrives as a new request,
// and carrying the traceparent lets its processing continue this job's trace.
func StampTrace(ctx context.Context, replies []chatlink.Reply) {
	stampTraceParent(ctx, replies, "")
}

// stampTraceParent puts tp into the replies' buttons, or ctx's trace when tp is empty: chat-mio
// names the job's trace when its turn ran in one other than the request's (a typed command
// about an existing job).
func stampTraceParent(ctx context.Context, replies []chatlink.Reply, tp string) {
	if tp == "" {
		tp = telemetry.TraceParent(ctx)
	}
	if tp == "" {
		return
	}
	for i := range replies {
		for j := range replies[i].Actions {
			replies[i].Actions[j].Trace = tp
		}
	}
}

// fetchImage downloads an image event's picture. A picture that is not passed on gets a
// refusal text (too large, wrong type, hosted elsewhere, gone); a transient failure is
// returned, so the event is retried.
func (r *Runtime) fetchImage(ctx context.Context, ev Event) (chatlink.InboundImage, string, error) {
	log := r.log.With(slog.String("event_id", ev.ID))
	f, ok := r.ch.(ImageFetcher)
	if !ok {
		return chatlink.InboundImage{}, r.texts.Unsupported, nil
	}
	img, err := f.FetchImage(ctx, ev, r.cfg.MaxImageBytes)
	refusal := ""
	switch {
	case err == nil:
		log.InfoContext(ctx, r.name+".image_fetched", slog.String("mime_type", img.MIMEType), slog.Int("size", len(img.Data)))
		return img, "", nil
	case errors.Is(err, ErrImageTooLarge):
		refusal = fmt.Sprintf(r.texts.ImageTooLarge, humanBytes(r.cfg.MaxImageBytes))
	case errors.Is(err, ErrImageType):
		refusal = r.texts.ImageType
	case errors.Is(err, ErrImageSource):
		refusal = r.texts.ImageSource
	case errors.Is(err, ErrPermanent):
		refusal = r.texts.ImageUnavailable
	default:
		return chatlink.InboundImage{}, "", fmt.Errorf("fetch image: %w", err)
	}
	log.InfoContext(ctx, r.name+".image_refused", slog.Any("reason", err))
	return chatlink.InboundImage{}, refusal, nil
}
