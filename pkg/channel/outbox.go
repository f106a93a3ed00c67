package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

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

// deliver sends o under key to to (raw is the answered event's stored form). With an outbox it
// is stored there, in this context's trace, and the outbox consumer sends it — except an answer
// to an event that can go out at once (sendFirst); without one it is sent at once. It returns
// how many messages go out and whether they were stored in the outbox.
func (r *Runtime) deliver(ctx context.Context, to Target, raw []byte, key string, o outbound) (int, bool, error) {
	o.SessionID = to.SessionID
	if to.Event != nil {
		o.Event, o.InReply, o.Redelivered = raw, to.InReply, to.Redelivered
		if _, direct := r.cfg.Outbox.(firstOutbox); direct && to.Attempt > 1 {
			// An earlier attempt may have sent it directly before failing to store it: never
			// the reply token again.
			o.Redelivered = true
		}
	}
	if r.cfg.Outbox == nil {
		n, err := r.sendNow(ctx, to, key, o)
		if err != nil && errors.Is(err, ErrPermanent) {
			return n, false, inbox.Permanent(err)
		}
		return n, false, err
	}
	n := sendable(o.Replies)
	if n == 0 && !o.Finish {
		return 0, false, nil
	}
	if to.Event != nil {
		if sent, done, err := r.sendFirst(ctx, to, key, &o); done {
			return sent, false, err
		}
	}
	ev, err := r.outboxEvent(ctx, key, o)
	if err != nil {
		return 0, true, err
	}
	res, err := r.cfg.Outbox.Append(ctx, ev)
	if err != nil {
		return 0, true, fmt.Errorf("store outbound %s: %w", key, err)
	}
	if res.Duplicate > 0 {
		r.log.InfoContext(ctx, r.name+".outbound_stored_before", slog.String("key", key))
	}
	return n, true, nil
}

// outboxEvent is o as the outbox stores it under key, in this context's trace.
func (r *Runtime) outboxEvent(ctx context.Context, key string, o outbound) (inbox.Event, error) {
	payload, err := json.Marshal(o)
	if err != nil {
		return inbox.Event{}, inbox.Permanent(fmt.Errorf("%w: outbound %s: %w", ErrInvalid, key, err))
	}
	meta := propagation.MapCarrier{}
	r.prop.Inject(ctx, meta)
	return inbox.Event{ID: key, Key: o.SessionID, Payload: payload, Meta: meta}, nil
}

// firstOutbox is an outbox that tells whether a chat has sends stored and not yet ended, and
// takes a refused send straight into its dead letters (inbox.Store).
type firstOutbox interface {
	Outstanding(ctx context.Context, key string) (bool, error)
	BuryNew(ctx context.Context, ev inbox.Event, kind string, cause error) (bool, error)
}

// directGrace is how long a direct send under way may go on once the gateway stops (it is not
// cut short before: the channel may already have taken it); directPause is how long answers go
// through the outbox after a direct send failed (until the outbox sends again, whichever comes
// first). A send has no deadline of its own beyond the channel client's timeouts: cut short, a
// slow answer the channel took anyway would be sent again from the outbox.
const (
	directGrace = 2 * time.Second
	directPause = 30 * time.Second
)

// sendFirst sends an answer at once, skipping the outbox, when that keeps every promise the
// outbox makes: the event is handled for the first time (a redelivered or retried event may
// have been answered before: its answer goes to the outbox, whose dedupe on the send key
// remembers it), the chat has nothing in the outbox (a later answer never overtakes an earlier
// one; a notification stored meanwhile waits for the direct send in this process, see
// awaitDirect) and the channel worked the last time. The answer's event stays unacknowledged in the
// inbox until this returns, so a crash meanwhile redelivers the event and its kept answer, as a
// crash before the outbox's acknowledgement does. A send the channel refuses goes to the
// outbox's dead letters, as it would from the outbox, and is not tried again.
//
// done is false when the answer is to be stored in the outbox instead: then o is marked as
// possibly sent already (Redelivered), so the outbox never uses a reply token twice and sends
// again under the same send key (the channel's idempotency key or sent mark).
func (r *Runtime) sendFirst(ctx context.Context, to Target, key string, o *outbound) (n int, done bool, err error) {
	q, can := r.cfg.Outbox.(firstOutbox)
	if !can || to.Redelivered || to.Attempt > 1 || time.Now().UnixNano() < r.directOff.Load() {
		return 0, false, nil
	}
	finished := r.beginDirect(o.SessionID)
	defer finished()
	if busy, err := q.Outstanding(ctx, o.SessionID); err != nil || busy || ctx.Err() != nil {
		if err != nil {
			r.log.WarnContext(ctx, r.name+".outstanding_failed", slog.Any("error", err))
		}
		return 0, false, nil
	}
	// A send once begun is not cut short at once by a shutdown (the consumer waits for it,
	// then acknowledges the event): cancelled midway, the channel might have taken it while the
	// event is redelivered and answered again after the restart.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(directGrace, cancel) })
	defer stop()
	sctx, span := r.tracer.Start(sctx, r.name+".send", trace.WithAttributes(
		attribute.String(r.name+".send_key", key), attribute.Bool("direct", true)))
	defer span.End()
	n, err = r.sendNow(sctx, to, key, *o)
	if err == nil {
		r.cfg.Metrics.count(r.name, "direct", "sent")
		return n, true, nil
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, "send failed")
	o.Redelivered = true
	if errors.Is(err, ErrPermanent) || errors.Is(err, ErrInvalid) {
		ev, merr := r.outboxEvent(ctx, key, *o)
		if merr != nil {
			return 0, true, merr
		}
		if _, berr := q.BuryNew(ctx, ev, inbox.DeadPermanent, err); berr != nil {
			return 0, true, fmt.Errorf("store refused outbound %s: %w", key, berr)
		}
		r.log.ErrorContext(ctx, r.name+".send_refused", slog.String("key", key), slog.Any("error", err))
		r.cfg.Metrics.count(r.name, "direct", "refused")
		return 0, true, nil
	}
	// The channel is failing (not just this message): the next answers queue up behind this
	// one instead of each waiting out a send of its own.
	r.directOff.Store(time.Now().Add(directPause).UnixNano())
	r.log.WarnContext(ctx, r.name+".send_queued", slog.String("key", key), slog.Any("error", err))
	r.cfg.Metrics.count(r.name, "direct", "queued")
	return 0, false, nil
}

// beginDirect records that an answer of session is about to be sent directly, until done is
// called: awaitDirect holds the outbox's sends to that session meanwhile.
func (r *Runtime) beginDirect(session string) (done func()) {
	ch := make(chan struct{})
	r.directMu.Lock()
	if r.direct == nil {
		r.direct = map[string]chan struct{}{}
	}
	prev := r.direct[session]
	r.direct[session] = ch
	r.directMu.Unlock()
	return func() {
		r.directMu.Lock()
		if r.direct[session] == ch {
			if prev != nil {
				r.direct[session] = prev
			} else {
				delete(r.direct, session)
			}
		}
		r.directMu.Unlock()
		close(ch)
	}
}

// awaitDirect waits while an answer of session is being sent directly by this process: a
// notification stored after that answer's check of the outbox goes out after it. (Another
// replica's outbox consumer does not see this process's direct sends: across replicas, a
// notification stored during the send may go out first.)
func (r *Runtime) awaitDirect(ctx context.Context, session string) error {
	r.directMu.Lock()
	ch := r.direct[session]
	r.directMu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
	if err := r.awaitDirect(ctx, o.SessionID); err != nil {
		return err
	}
	n, err := r.sendNow(ctx, to, d.ID, o)
	if err != nil {
		if errors.Is(err, ErrPermanent) || errors.Is(err, ErrInvalid) {
			r.cfg.Metrics.count(r.name, "outbox", "refused")
			return inbox.Permanent(err)
		}
		r.cfg.Metrics.count(r.name, "outbox", "retried")
		return err
	}
	r.cfg.Metrics.count(r.name, "outbox", "sent")
	r.directOff.Store(0)
	r.log.InfoContext(ctx, r.name+".sent", slog.String("key", d.ID), slog.String("session_id", o.SessionID),
		slog.Int("messages", n), slog.Int("attempt", d.Attempt))
	return nil
}
