package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// outbound is one send as the outbox stores it: everything needed to send it again after a
// restart, without asking chat-mio again. Its outbox event id is the send key, so a send is
// stored once however often the answer is produced (a redelivered event, a repeated Push).
type outbound struct {
	SessionID string `json:"session_id"`
	// Event is the answered event as the inbox stored it (the channel decodes it again for its
	// reply token, thread, pressed message); empty for a notification.
	Event []byte `json:"event,omitempty"`
	// InReply: the answer itself, which may use a reply token; Redelivered: the answered event
	// had been delivered before, so its reply token may be spent.
	InReply     bool `json:"in_reply,omitempty"`
	Redelivered bool `json:"redelivered,omitempty"`
	// Finish: the pressed button is closed first (Finisher); Private: the answer goes to the
	// presser alone (Whisperer).
	Finish  bool             `json:"finish,omitempty"`
	Private bool             `json:"private,omitempty"`
	JobID   string           `json:"job_id,omitempty"`
	Replies []chatlink.Reply `json:"replies"`
}

// sendable counts the replies that say something.
func sendable(replies []chatlink.Reply) int {
	n := 0
	for _, r := range replies {
		if r.Text != "" || len(r.Actions) > 0 || len(r.Images) > 0 {
			n++
		}
	}
	return n
}

// deliver sends o under key to to (raw is the answered event's stored form): with an outbox it
// is stored there, in this context's trace, and the outbox consumer sends it; without one it is
// sent at once. It returns how many messages go out.
func (r *Runtime) deliver(ctx context.Context, to Target, raw []byte, key string, o outbound) (int, error) {
	o.SessionID = to.SessionID
	if to.Event != nil {
		o.Event, o.InReply, o.Redelivered = raw, to.InReply, to.Redelivered
	}
	if r.cfg.Outbox == nil {
		n, err := r.sendNow(ctx, to, key, o)
		if err != nil && errors.Is(err, ErrPermanent) {
			return n, inbox.Permanent(err)
		}
		return n, err
	}
	n := sendable(o.Replies)
	if n == 0 && !o.Finish {
		return 0, nil
	}
	payload, err := json.Marshal(o)
	if err != nil {
		return 0, inbox.Permanent(fmt.Errorf("%w: outbound %s: %w", ErrInvalid, key, err))
	}
	meta := propagation.MapCarrier{}
	r.prop.Inject(ctx, meta)
	res, err := r.cfg.Outbox.Append(ctx, inbox.Event{ID: key, Key: o.SessionID, Payload: payload, Meta: meta})
	if err != nil {
		return 0, fmt.Errorf("store outbound %s: %w", key, err)
	}
	if res.Duplicate > 0 {
		r.log.InfoContext(ctx, r.name+".outbound_stored_before", slog.String("key", key))
	}
	return n, nil
}

// sendNow sends o through the channel: the pressed button closed first, then the replies,
// privately or not.
func (r *Runtime) sendNow(ctx context.Context, to Target, key string, o outbound) (int, error) {
	if o.Finish && to.Event != nil {
		if f, ok := r.ch.(Finisher); ok {
			if err := f.AfterChat(ctx, *to.Event); err != nil {
				return 0, err
			}
		}
	}
	if o.Private && to.Event != nil {
		if w, ok := r.ch.(Whisperer); ok {
			return w.SendPrivate(ctx, *to.Event, key, o.Replies)
		}
	}
	return r.ch.Send(ctx, to, key, o.Replies)
}

// Deliver sends one stored outbound message (the outbox consumer's handler): a nil error lets
// the outbox acknowledge it; a failure the channel marks permanent goes to the outbox's dead
// letters at once, any other is retried (network errors, 429 and 5xx from the channel's API)
// until the outbox's maximum age. The send key is the outbox event id, so every retry — in this
// process or after a restart — is the same send to the channel (LINE's retry key, Slack's sent
// marks).
func (r *Runtime) Deliver(ctx context.Context, d inbox.Delivery) (err error) {
	ctx = r.prop.Extract(ctx, propagation.MapCarrier(d.Meta))
	ctx, span := r.tracer.Start(ctx, r.name+".send", trace.WithAttributes(
		attribute.String(r.name+".send_key", d.ID), attribute.Bool("redelivered", d.Redelivered), attribute.Int("attempt", d.Attempt)))
	defer func() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "send failed")
		}
		span.End()
	}()
	var o outbound
	if err := json.Unmarshal(d.Payload, &o); err != nil {
		return inbox.Permanent(fmt.Errorf("%w: outbound %s: %w", ErrInvalid, d.ID, err))
	}
	if o.JobID != "" {
		ctx = jobid.WithJobID(ctx, o.JobID)
	}
	to := Target{SessionID: o.SessionID, InReply: o.InReply, Redelivered: o.Redelivered || d.Redelivered, Attempt: d.Attempt}
	if len(o.Event) > 0 {
		ev, err := r.ch.Decode(o.Event)
		if err != nil {
			return inbox.Permanent(err)
		}
		to.Event = &ev
	} else {
		t, err := r.ch.Target(o.SessionID)
		if err != nil {
			return inbox.Permanent(err)
		}
		to.Native = t.Native
	}
	n, err := r.sendNow(ctx, to, d.ID, o)
	if err != nil {
		if errors.Is(err, ErrPermanent) || errors.Is(err, ErrInvalid) {
			return inbox.Permanent(err)
		}
		return err
	}
	r.log.InfoContext(ctx, r.name+".sent", slog.String("key", d.ID), slog.String("session_id", o.SessionID),
		slog.Int("messages", n), slog.Int("attempt", d.Attempt))
	return nil
}
