package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
)

// fakeFirstOutbox is an outbox that tells which chats have sends outstanding (inbox.Store does),
// so answers may skip it.
type fakeFirstOutbox struct {
	memStore
	busy    map[string]bool
	busyErr error
	asked   int
	dead    []buried
}

type buried struct {
	ev    inbox.Event
	kind  string
	cause error
}

func (f *fakeFirstOutbox) BuryNew(_ context.Context, ev inbox.Event, kind string, cause error) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	f.dead = append(f.dead, buried{ev: ev, kind: kind, cause: cause})
	return true, nil
}

func (f *fakeFirstOutbox) Outstanding(_ context.Context, key string) (bool, error) {
	f.asked++
	if f.busyErr != nil {
		return false, f.busyErr
	}
	for _, ev := range f.events {
		if ev.Key == key {
			return true, nil
		}
	}
	return f.busy[key], nil
}

func answerOK(job string) *fakeChat {
	return &fakeChat{res: chatlink.Response{JobID: job, Replies: []chatlink.Reply{{Text: "ok"}}}}
}

// TestSendFirst: an answer goes out at once when its chat has nothing in the outbox, and
// through the outbox otherwise — behind the chat's earlier sends, or after a failed direct send
// (marked possibly sent, so a reply token is never used twice), after which answers queue until
// the outbox sends again.
func TestSendFirst(t *testing.T) {
	ctx := context.Background()
	// msg is a message of the allowed user U1 in the chat "fake:<chat>".
	msg := func(id, chat string) inbox.Delivery {
		return delivery(t, Event{ID: id, Kind: KindMessage, SessionID: "fake:" + chat, UserID: "U1", Text: "hi"}, 1)
	}

	t.Run("nothing outstanding: sent at once, nothing stored", func(t *testing.T) {
		ch, out := &fakeChannel{}, &fakeFirstOutbox{}
		rt := newRuntimeWith(ch, answerOK("job_20261121_001"), out)
		if err := rt.Handle(ctx, msg("E1", "U1")); err != nil {
			t.Fatal(err)
		}
		if len(out.events) != 0 || len(ch.sends) != 1 {
			t.Fatalf("stored %+v, sent %+v", out.events, ch.sends)
		}
		got := ch.sends[0]
		if got.key != "event:E1" || !got.to.InReply || got.to.Redelivered || got.to.Event == nil || got.to.Event.ID != "E1" {
			t.Fatalf("answer sent as %+v", got)
		}
	})

	t.Run("an earlier send of the chat is outstanding: stored behind it", func(t *testing.T) {
		ch, out := &fakeChannel{}, &fakeFirstOutbox{busy: map[string]bool{"fake:U1": true}}
		rt := newRuntimeWith(ch, answerOK("job_20261121_002"), out)
		if err := rt.Handle(ctx, msg("E2", "U1")); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 0 || len(out.events) != 1 || out.events[0].ID != "event:E2" || out.events[0].Key != "fake:U1" {
			t.Fatalf("stored %+v, sent %+v", out.events, ch.sends)
		}
	})

	t.Run("the outbox cannot tell: stored, or retried when it cannot store either", func(t *testing.T) {
		ch, out := &fakeChannel{}, &fakeFirstOutbox{busyErr: errors.New("redis down")}
		rt := newRuntimeWith(ch, answerOK("job_20261121_003"), out)
		if err := rt.Handle(ctx, msg("E3", "U1")); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 0 || len(out.events) != 1 {
			t.Fatalf("stored %+v, sent %+v", out.events, ch.sends)
		}
		out.err = errors.New("redis down")
		if err := rt.Handle(ctx, msg("E4", "U2")); err == nil || inbox.IsPermanent(err) {
			t.Fatalf("nothing could keep the answer: %v", err)
		}
	})

	t.Run("a failed direct send goes to the outbox, and the next answers follow until it sends", func(t *testing.T) {
		ch, out := &fakeChannel{sendErr: errors.New("503 from the channel")}, &fakeFirstOutbox{}
		rt := newRuntimeWith(ch, answerOK("job_20261121_005"), out)
		if err := rt.Handle(ctx, msg("E5", "U1")); err != nil {
			t.Fatal(err)
		}
		if len(out.events) != 1 || out.events[0].ID != "event:E5" {
			t.Fatalf("stored %+v", out.events)
		}
		ch.sendErr = nil
		// Another chat, nothing outstanding there: still queued, the channel was failing.
		asked := out.asked
		if err := rt.Handle(ctx, msg("E6", "U2")); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 0 || len(out.events) != 2 || out.asked != asked {
			t.Fatalf("while paused: stored %+v, sent %+v, outstanding asked %d→%d", out.events, ch.sends, asked, out.asked)
		}
		if err := drain(rt, &out.memStore); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 2 {
			t.Fatalf("outbox sent %+v", ch.sends)
		}
		// The possibly spent reply token is not used again: the outbox sends as for a redelivery.
		if first := ch.sends[0]; first.key != "event:E5" || !first.to.Redelivered {
			t.Fatalf("failed direct send resent as %+v", first)
		}
		if second := ch.sends[1]; second.key != "event:E6" || second.to.Redelivered {
			t.Fatalf("queued answer sent as %+v", second)
		}
		// The outbox sent: answers go out at once again.
		if err := rt.Handle(ctx, msg("E7", "U2")); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 3 || len(out.events) != 0 || ch.sends[2].key != "event:E7" {
			t.Fatalf("after the outbox sent: stored %+v, sent %+v", out.events, ch.sends)
		}
	})

	t.Run("a refused send goes to the dead letters, is not tried again and holds up nothing", func(t *testing.T) {
		ch, out := &fakeChannel{sendErr: fmt.Errorf("%w: 400", ErrPermanent)}, &fakeFirstOutbox{}
		rt := newRuntimeWith(ch, answerOK("job_20261121_008"), out)
		if err := rt.Handle(ctx, msg("E8", "U1")); err != nil {
			t.Fatal(err)
		}
		if len(out.events) != 0 || len(out.dead) != 1 {
			t.Fatalf("stored %+v, dead %+v", out.events, out.dead)
		}
		d := out.dead[0]
		if d.ev.ID != "event:E8" || d.ev.Key != "fake:U1" || d.kind != inbox.DeadPermanent || !errors.Is(d.cause, ErrPermanent) ||
			d.ev.Meta["traceparent"] == "" {
			t.Fatalf("dead letter %+v", d)
		}
		// The dead letter replays as an outbox entry: it decodes and is sent.
		ch.sendErr = nil
		if err := rt.Deliver(ctx, inbox.Delivery{Event: d.ev, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
		if err := rt.Handle(ctx, msg("E9", "U2")); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 2 || ch.sends[0].key != "event:E8" || ch.sends[1].key != "event:E9" || len(out.events) != 0 {
			t.Fatalf("sent %+v, stored %+v", ch.sends, out.events)
		}
		// Nothing can keep the refused send: the event is retried.
		ch.sendErr, out.err = fmt.Errorf("%w: 400", ErrPermanent), errors.New("redis down")
		if err := rt.Handle(ctx, msg("E10", "U3")); err == nil || inbox.IsPermanent(err) {
			t.Fatalf("refused and not kept = %v", err)
		}
	})

	t.Run("notifications always go through the outbox", func(t *testing.T) {
		ch, out := &fakeChannel{}, &fakeFirstOutbox{}
		rt := newRuntimeWith(ch, answerOK("job_20261121_010"), out)
		if n, err := rt.Notify(ctx, "fake:U1", "job_20261121_010", "k1", []chatlink.Reply{{Text: "結果"}}); err != nil || n != 1 {
			t.Fatalf("notify = %d, %v", n, err)
		}
		if len(ch.sends) != 0 || len(out.events) != 1 || out.events[0].ID != "notify:k1" || out.asked != 0 {
			t.Fatalf("stored %+v, sent %+v", out.events, ch.sends)
		}
	})
}

// shutdownChannel stops its consumer (cancels the handler's context) in the middle of a send.
type shutdownChannel struct {
	*fakeChannel
	stop   context.CancelFunc
	ctxErr error
}

func (s *shutdownChannel) Send(ctx context.Context, to Target, key string, replies []chatlink.Reply) (int, error) {
	s.stop()
	s.ctxErr = ctx.Err()
	return s.fakeChannel.Send(ctx, to, key, replies)
}

// TestSendFirstFinishesOnShutdown: a direct send under way when the gateway stops is finished,
// not cut short (the channel may already have it), so the event is acknowledged once answered;
// none is begun once stopping.
func TestSendFirstFinishesOnShutdown(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	ch := &shutdownChannel{fakeChannel: &fakeChannel{}, stop: stop}
	out := &fakeFirstOutbox{}
	rt := newRuntimeWith(ch, answerOK("job_20261121_011"), out)
	if err := rt.Handle(ctx, delivery(t, Event{ID: "E11", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hi"}, 1)); err != nil {
		t.Fatal(err)
	}
	if ch.ctxErr != nil || len(ch.sends) != 1 || len(out.events) != 0 {
		t.Fatalf("send saw %v; sent %+v, stored %+v", ch.ctxErr, ch.sends, out.events)
	}
	// Already stopping: nothing is sent; the answer is stored if the outbox still can be written.
	if err := rt.Handle(ctx, delivery(t, Event{ID: "E12", Kind: KindMessage, SessionID: "fake:U2", UserID: "U1", Text: "hi"}, 1)); err != nil {
		t.Fatal(err)
	}
	if len(ch.sends) != 1 || len(out.events) != 1 || out.events[0].ID != "event:E12" {
		t.Fatalf("while stopping: sent %+v, stored %+v", ch.sends, out.events)
	}
}

// TestSendFirstOnlyOnFirstDelivery: an event redelivered or retried may have been answered
// before, so its answer goes to the outbox (whose dedupe on the send key remembers it), marked
// possibly sent; and a direct send has no deadline of its own.
func TestSendFirstOnlyOnFirstDelivery(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		attempt     int
		redelivered bool
	}{{"redelivered", 1, true}, {"retried", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ch, out := &fakeChannel{}, &fakeFirstOutbox{}
			rt := newRuntimeWith(ch, answerOK("job_20261121_020"), out)
			d := delivery(t, Event{ID: "E20", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hi"}, tc.attempt)
			d.Redelivered = tc.redelivered
			if err := rt.Handle(ctx, d); err != nil {
				t.Fatal(err)
			}
			if len(ch.sends) != 0 || len(out.events) != 1 || out.events[0].ID != "event:E20" {
				t.Fatalf("sent %+v, stored %+v", ch.sends, out.events)
			}
			var o outbound
			if err := json.Unmarshal(out.events[0].Payload, &o); err != nil || !o.Redelivered {
				t.Fatalf("stored without the possibly-sent mark: %+v, %v", o, err)
			}
		})
	}
	t.Run("no deadline of its own", func(t *testing.T) {
		ch := &deadlineChannel{fakeChannel: &fakeChannel{}}
		rt := newRuntimeWith(ch, answerOK("job_20261121_021"), &fakeFirstOutbox{})
		if err := rt.Handle(ctx, delivery(t, Event{ID: "E21", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hi"}, 1)); err != nil {
			t.Fatal(err)
		}
		if len(ch.sends) != 1 || ch.hadDeadline {
			t.Fatalf("sent %+v, deadline %v", ch.sends, ch.hadDeadline)
		}
	})
	t.Run("a refused answer is buried marked possibly sent", func(t *testing.T) {
		ch, out := &fakeChannel{sendErr: fmt.Errorf("%w: 400", ErrPermanent)}, &fakeFirstOutbox{}
		rt := newRuntimeWith(ch, answerOK("job_20261121_022"), out)
		if err := rt.Handle(ctx, delivery(t, Event{ID: "E22", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hi"}, 1)); err != nil {
			t.Fatal(err)
		}
		var o outbound
		if len(out.dead) != 1 || json.Unmarshal(out.dead[0].ev.Payload, &o) != nil || !o.Redelivered {
			t.Fatalf("dead %+v", out.dead)
		}
	})
}

type deadlineChannel struct {
	*fakeChannel
	hadDeadline bool
}

func (d *deadlineChannel) Send(ctx context.Context, to Target, key string, replies []chatlink.Reply) (int, error) {
	_, d.hadDeadline = ctx.Deadline()
	return d.fakeChannel.Send(ctx, to, key, replies)
}

// blockingChannel holds its first send until released and records the order of sends.
type blockingChannel struct {
	fakeChannel
	mu      sync.Mutex
	started chan struct{}
	release chan struct{}
	order   []string
}

func (b *blockingChannel) Send(ctx context.Context, to Target, key string, replies []chatlink.Reply) (int, error) {
	b.mu.Lock()
	first := len(b.order) == 0 && b.started != nil
	b.mu.Unlock()
	if first {
		close(b.started)
		<-b.release
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.order = append(b.order, key)
	return len(replies), nil
}

// TestNotificationWaitsForDirectAnswer: a notification the outbox holds for a chat whose answer
// is being sent directly goes out after that answer, not before.
func TestNotificationWaitsForDirectAnswer(t *testing.T) {
	ctx := context.Background()
	ch := &blockingChannel{started: make(chan struct{}), release: make(chan struct{})}
	out := &fakeFirstOutbox{}
	rt := newRuntimeWith(ch, answerOK("job_20261121_030"), out)
	handled := make(chan error, 1)
	go func() {
		handled <- rt.Handle(ctx, delivery(t, Event{ID: "E30", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hi"}, 1))
	}()
	<-ch.started
	// Meanwhile a result is pushed for the same chat: stored, then delivered by the outbox.
	note := inbox.Event{ID: "notify:k30", Key: "fake:U1",
		Payload: []byte(`{"session_id":"fake:U1","job_id":"job_20261121_030","replies":[{"text":"結果"}]}`)}
	delivered := make(chan error, 1)
	go func() { delivered <- rt.Deliver(ctx, inbox.Delivery{Event: note, Attempt: 1}) }()
	select {
	case err := <-delivered:
		t.Fatalf("notification delivered during the direct send: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(ch.release)
	if err := <-handled; err != nil {
		t.Fatal(err)
	}
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(ch.order) != 2 || ch.order[0] != "event:E30" || ch.order[1] != "notify:k30" {
		t.Fatalf("sent in the order %v", ch.order)
	}
}

// TestSendMetrics: every send is counted by path and outcome.
func TestSendMetrics(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := NewSendMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	ch, out := &fakeChannel{}, &fakeFirstOutbox{}
	rt := newRuntimeWith(ch, answerOK("job_20261121_040"), out)
	rt.cfg.Metrics = m
	msg := func(id, chat string) inbox.Delivery {
		return delivery(t, Event{ID: id, Kind: KindMessage, SessionID: "fake:" + chat, UserID: "U1", Text: "hi"}, 1)
	}
	if err := rt.Handle(ctx, msg("E40", "U1")); err != nil { // sent at once
		t.Fatal(err)
	}
	ch.sendErr = errors.New("503 from the channel")
	if err := rt.Handle(ctx, msg("E41", "U2")); err != nil { // failed, queued
		t.Fatal(err)
	}
	if err := drain(rt, &out.memStore); err == nil { // the outbox's try fails too
		t.Fatal("the outbox sent while the channel was down")
	}
	ch.sendErr = fmt.Errorf("%w: 400", ErrPermanent)
	if err := rt.Deliver(ctx, inbox.Delivery{Event: inbox.Event{ID: "event:E41", Key: "fake:U2",
		Payload: []byte(`{"session_id":"fake:U2","replies":[{"text":"ok"}]}`)}, Attempt: 2}); !inbox.IsPermanent(err) {
		t.Fatalf("refused = %v", err)
	}
	ch.sendErr = nil
	if err := rt.Deliver(ctx, inbox.Delivery{Event: inbox.Event{ID: "notify:k", Key: "fake:U2",
		Payload: []byte(`{"session_id":"fake:U2","replies":[{"text":"ok"}]}`)}, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, outcome string
		want          float64
	}{{"direct", "sent", 1}, {"direct", "queued", 1}, {"outbox", "retried", 1}, {"outbox", "refused", 1}, {"outbox", "sent", 1}, {"direct", "refused", 0}} {
		if got := testutil.ToFloat64(m.sends.WithLabelValues("fake", c.path, c.outcome)); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.path, c.outcome, got, c.want)
		}
	}
}
