package channel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
)

// fakeChannel stores events as JSON Events and records every send.
type fakeChannel struct {
	sends    []send
	sendErr  error
	prepared []string
	// prepDone records, for each call of BeforeChat's done function, how many sends had been
	// made by then (the runtime calls it once, before any).
	prepDone []int
	finished []string
	finErr   error
}

type send struct {
	to      Target
	key     string
	replies []chatlink.Reply
}

func (f *fakeChannel) Name() string { return "fake" }

func (f *fakeChannel) Decode(b []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil || ev.ID == "" {
		return Event{}, fmt.Errorf("%w: %s", ErrInvalid, b)
	}
	if ev.Kind == KindAction && ev.Action == nil {
		ev.Ignore = fmt.Errorf("%w: press without an action", ErrInvalid)
	}
	return ev, nil
}

func (f *fakeChannel) Target(session string) (Target, error) {
	if !strings.HasPrefix(session, "fake:") {
		return Target{}, fmt.Errorf("%w: %s", ErrInvalid, session)
	}
	if session == "fake:gone" {
		return Target{}, ErrUnknownSession
	}
	return Target{Native: strings.TrimPrefix(session, "fake:")}, nil
}

func (f *fakeChannel) Send(_ context.Context, to Target, key string, replies []chatlink.Reply) (int, error) {
	if f.sendErr != nil {
		return 0, f.sendErr
	}
	n := 0
	for _, r := range replies {
		if r.Text != "" {
			n++
		}
	}
	if n > 0 {
		f.sends = append(f.sends, send{to: to, key: key, replies: replies})
	}
	return n, nil
}

func (f *fakeChannel) BeforeChat(_ context.Context, ev Event) func() {
	f.prepared = append(f.prepared, ev.ID)
	return func() { f.prepDone = append(f.prepDone, len(f.sends)) }
}

func (f *fakeChannel) AfterChat(_ context.Context, ev Event) error {
	f.finished = append(f.finished, ev.ID)
	return f.finErr
}

type fakeChat struct {
	req  chatlink.Request
	res  chatlink.Response
	err  error
	seen int
}

func (c *fakeChat) HandleMessage(_ context.Context, req chatlink.Request) (chatlink.Response, error) {
	c.seen++
	c.req = req
	return c.res, c.err
}

func newRuntime(ch Channel, chat Chat, tp ...sdktrace.TracerProviderOption) *Runtime {
	return newRuntimeWith(ch, chat, nil, tp...)
}

// newRuntimeWith is a runtime whose sends go through outbox (nil: sent at once).
func newRuntimeWith(ch Channel, chat Chat, outbox Appender, tp ...sdktrace.TracerProviderOption) *Runtime {
	return NewRuntime(ch, RuntimeConfig{Locale: "en", Allow: NewAllowlist([]string{"U1"}), Outbox: outbox}, chat, slog.New(slog.DiscardHandler),
		sdktrace.NewTracerProvider(tp...), propagation.TraceContext{})
}

// modes runs f with sends made at once, with sends stored in an outbox and then delivered by
// the outbox's handler (handle returns the event's error, then the first send's), and with
// answers sent first and stored only when that fails (a refused one counts as the outbox's
// permanent failure).
func modes(t *testing.T, f func(t *testing.T, handle func(rt *Runtime, d inbox.Delivery) error, mk func(ch Channel, chat Chat) *Runtime)) {
	t.Run("direct", func(t *testing.T) {
		f(t, func(rt *Runtime, d inbox.Delivery) error { return rt.Handle(context.Background(), d) },
			func(ch Channel, chat Chat) *Runtime { return newRuntime(ch, chat) })
	})
	t.Run("outbox", func(t *testing.T) {
		out := &memStore{}
		f(t, func(rt *Runtime, d inbox.Delivery) error {
			if err := rt.Handle(context.Background(), d); err != nil {
				return err
			}
			return drain(rt, out)
		}, func(ch Channel, chat Chat) *Runtime { return newRuntimeWith(ch, chat, out) })
	})
	t.Run("send first", func(t *testing.T) {
		out := &fakeFirstOutbox{}
		f(t, func(rt *Runtime, d inbox.Delivery) error {
			if err := rt.Handle(context.Background(), d); err != nil {
				return err
			}
			if len(out.dead) > 0 { // refused at once: in the outbox's dead letters, as permanent
				cause := out.dead[0].cause
				out.dead = nil
				return inbox.Permanent(cause)
			}
			return drain(rt, &out.memStore)
		}, func(ch Channel, chat Chat) *Runtime { return newRuntimeWith(ch, chat, out) })
	})
}

// drain delivers what out holds through rt's outbox handler, first error first.
func drain(rt *Runtime, out *memStore) error {
	var first error
	for _, ev := range out.events {
		if err := rt.Deliver(context.Background(), inbox.Delivery{Event: ev, Attempt: 1}); err != nil && first == nil {
			first = err
		}
	}
	out.events = nil
	return first
}

func delivery(t *testing.T, ev Event, attempt int) inbox.Delivery {
	t.Helper()
	ev.Ignore = nil // the fake's stored form: a press without an action
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return inbox.Delivery{Event: inbox.Event{ID: ev.ID, Payload: b}, Attempt: attempt}
}

// handleCase is one event of TestHandle and what must come of it.
type handleCase struct {
	name      string
	ev        Event
	chatErr   error
	sendErr   error
	finErr    error
	wantKey   string // the send's key, "" = nothing sent
	wantText  string
	wantChat  bool
	wantErr   string // "", "retry", "permanent"
	finished  bool
	preparing bool
	refused   bool // chat-mio did not apply the decision
}

func TestHandle(t *testing.T) {
	approve := &chatlink.Action{Kind: chatlink.ActionApprove, JobID: "job_20261121_003"}
	answer := chatlink.Response{JobID: "job_20261121_003", ActionApplied: true, Replies: []chatlink.Reply{{Text: "ok",
		Actions: []chatlink.Action{{Kind: chatlink.ActionDeny, JobID: "job_20261121_003"}}}}}
	for _, tc := range []handleCase{
		{name: "message answered", ev: Event{ID: "E1", Kind: KindMessage, UserID: "U1", Text: "hi"},
			wantKey: "event:E1", wantText: "ok", wantChat: true, preparing: true},
		{name: "stranger refused without chat-mio", ev: Event{ID: "E2", Kind: KindMessage, UserID: "U9"},
			wantKey: "refusal:E2", wantText: chatlink.TextsFor("en").Refusal},
		{name: "follow welcomed", ev: Event{ID: "E3", Kind: KindFollow, UserID: "U1"}, wantKey: "welcome:E3", wantText: chatlink.TextsFor("en").Welcome},
		{name: "unfollow only logged", ev: Event{ID: "E4", Kind: KindUnfollow, UserID: "U9"}},
		{name: "undecodable press ignored", ev: Event{ID: "E5", Kind: KindAction, UserID: "U1", Ignore: ErrInvalid}},
		{name: "press finished after chat-mio", ev: Event{ID: "E6", Kind: KindAction, UserID: "U1", Action: approve},
			wantKey: "event:E6", wantText: "ok", wantChat: true, finished: true, preparing: true},
		{name: "refused press keeps its buttons", ev: Event{ID: "E6b", Kind: KindAction, UserID: "U1", Action: approve},
			refused: true, wantKey: "event:E6b", wantText: "ok", wantChat: true, preparing: true},
		{name: "finishing failure is retried", ev: Event{ID: "E7", Kind: KindAction, UserID: "U1", Action: approve},
			finErr: errors.New("slack 503"), wantChat: true, wantErr: "retry", finished: true, preparing: true},
		{name: "chat-mio down is retried", ev: Event{ID: "E8", Kind: KindMessage, UserID: "U1"}, chatErr: errors.New("unavailable"),
			wantChat: true, wantErr: "retry", preparing: true},
		{name: "chat-mio refusal is permanent", ev: Event{ID: "E9", Kind: KindMessage, UserID: "U1"},
			chatErr: fmt.Errorf("%w: invalid", ErrPermanent), wantChat: true, wantErr: "permanent", preparing: true},
		{name: "channel refusal is permanent", ev: Event{ID: "E10", Kind: KindMessage, UserID: "U1"},
			sendErr: fmt.Errorf("%w: 400", ErrPermanent), wantChat: true, wantErr: "permanent", preparing: true},
	} {
		modes(t, func(t *testing.T, handle func(*Runtime, inbox.Delivery) error, mk func(Channel, Chat) *Runtime) {
			t.Run(tc.name, func(t *testing.T) { testHandleCase(t, tc, answer, handle, mk) })
		})
	}
	t.Run("undecodable event is permanent", func(t *testing.T) {
		err := newRuntime(&fakeChannel{}, &fakeChat{}).Handle(context.Background(), inbox.Delivery{Event: inbox.Event{ID: "x", Payload: []byte("{")}})
		if !inbox.IsPermanent(err) || !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
}

func testHandleCase(t *testing.T, tc handleCase, answer chatlink.Response, handle func(*Runtime, inbox.Delivery) error, mk func(Channel, Chat) *Runtime) {
	ch := &fakeChannel{sendErr: tc.sendErr, finErr: tc.finErr}
	res := answer
	res.ActionApplied = !tc.refused
	chat := &fakeChat{res: res, err: tc.chatErr}
	err := handle(mk(ch, chat), delivery(t, tc.ev, 1))
	if (tc.wantErr == "permanent") != inbox.IsPermanent(err) || (tc.wantErr == "") != (err == nil) {
		t.Fatalf("err = %v, want %q", err, tc.wantErr)
	}
	if (chat.seen > 0) != tc.wantChat {
		t.Fatalf("chat-mio called %d times", chat.seen)
	}
	if tc.wantChat && (chat.req.SessionID != tc.ev.SessionID || chat.req.EventID != tc.ev.ID || chat.req.Locale != "en" ||
		(tc.ev.Action != nil && *chat.req.Action != *tc.ev.Action)) {
		t.Fatalf("request %+v", chat.req)
	}
	if tc.wantKey == "" {
		if len(ch.sends) != 0 {
			t.Fatalf("sent %+v", ch.sends)
		}
	} else {
		if len(ch.sends) != 1 || ch.sends[0].key != tc.wantKey || ch.sends[0].replies[0].Text != tc.wantText ||
			!ch.sends[0].to.InReply || ch.sends[0].to.Event == nil || ch.sends[0].to.Event.ID != tc.ev.ID {
			t.Fatalf("sends %+v, want %s %q", ch.sends, tc.wantKey, tc.wantText)
		}
	}
	if (len(ch.finished) > 0) != tc.finished || (len(ch.prepared) > 0) != tc.preparing {
		t.Fatalf("finished %v prepared %v", ch.finished, ch.prepared)
	}
	if len(ch.prepDone) != len(ch.prepared) || slices.ContainsFunc(ch.prepDone, func(sent int) bool { return sent > 0 }) {
		t.Fatalf("BeforeChat's end called with %v sends made before it, want once per call (%d) before any send", ch.prepDone, len(ch.prepared))
	}
}

// TestButtonsCarryTheTrace: the buttons of an answer carry the traceparent of the event's trace,
// so a press continues it.
func TestButtonsCarryTheTrace(t *testing.T) {
	ch := &fakeChannel{}
	chat := &fakeChat{res: chatlink.Response{Replies: []chatlink.Reply{{Text: "ok", Actions: []chatlink.Action{{Kind: chatlink.ActionApprove, JobID: "j"}}}}}}
	if err := newRuntime(ch, chat).Handle(context.Background(), delivery(t, Event{ID: "E1", Kind: KindMessage, UserID: "U1"}, 1)); err != nil {
		t.Fatal(err)
	}
	tp := ch.sends[0].replies[0].Actions[0].Trace
	if len(strings.Split(tp, "-")) != 4 {
		t.Fatalf("button trace %q", tp)
	}
}

func TestGiveUp(t *testing.T) {
	ch := &fakeChannel{}
	rt := newRuntime(ch, &fakeChat{})
	rt.GiveUp(context.Background(), delivery(t, Event{ID: "E1", Kind: KindMessage, UserID: "U1"}, 3), errors.New("boom"))
	rt.GiveUp(context.Background(), delivery(t, Event{ID: "E2", Kind: KindMessage, UserID: "U9"}, 3), errors.New("boom"))
	rt.GiveUp(context.Background(), delivery(t, Event{ID: "E3", Kind: KindUnfollow, UserID: "U1"}, 3), errors.New("boom"))
	if len(ch.sends) != 1 || ch.sends[0].key != "failure:E1" || ch.sends[0].to.InReply || ch.sends[0].to.Attempt != 3 ||
		ch.sends[0].replies[0].Text != chatlink.TextsFor("en").Failure {
		t.Fatalf("sends %+v: only the allowed sender of E1 hears of the failure, not in reply", ch.sends)
	}
}

func TestNotify(t *testing.T) {
	ch := &fakeChannel{}
	rt := newRuntime(ch, &fakeChat{})
	ctx := context.Background()
	replies := []chatlink.Reply{{Text: "結果"}}
	for range 2 {
		if _, err := rt.Notify(ctx, "fake:U1", "job_1", "", replies); err != nil {
			t.Fatal(err)
		}
		if n, err := rt.Notify(ctx, "fake:U1", "job_1", "k1", replies); err != nil || n != 1 {
			t.Fatal(n, err)
		}
	}
	if ch.sends[0].key != ch.sends[2].key || ch.sends[1].key != "notify:k1" || ch.sends[3].key != "notify:k1" ||
		!strings.HasPrefix(ch.sends[0].key, "content:") || ch.sends[0].to.Native != "U1" || ch.sends[0].to.SessionID != "fake:U1" {
		t.Fatalf("sends %+v", ch.sends)
	}
	if _, err := rt.Notify(ctx, "fake:U1", "job_1", "", []chatlink.Reply{{Text: "別の結果"}}); err != nil || ch.sends[4].key == ch.sends[0].key {
		t.Fatalf("different content got the same key (%v)", err)
	}
	if _, err := rt.Notify(ctx, "fake:U1", "", "", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty notify = %v", err)
	}
	if _, err := rt.Notify(ctx, "other:U1", "", "", replies); !errors.Is(err, ErrInvalid) {
		t.Errorf("foreign session = %v", err)
	}
}

func TestNotificationHandlerCodes(t *testing.T) {
	ctx := context.Background()
	msgs := []*commonv1.ReplyMessage{{Text: "x"}}
	for _, tc := range []struct {
		session string
		sendErr error
		want    connect.Code
	}{
		{"other:U1", nil, connect.CodeInvalidArgument},
		{"fake:gone", nil, connect.CodeNotFound},
		{"fake:U1", fmt.Errorf("%w: blocked", ErrPermanent), connect.CodeFailedPrecondition},
		{"fake:U1", context.DeadlineExceeded, connect.CodeDeadlineExceeded},
		{"fake:U1", errors.New("503"), connect.CodeUnavailable},
	} {
		h := NewNotificationHandler(newRuntime(&fakeChannel{sendErr: tc.sendErr}, &fakeChat{}), "Fake")
		_, err := h.Push(ctx, &gatewayv1.PushRequest{SessionId: tc.session, Messages: msgs})
		if connect.CodeOf(err) != tc.want {
			t.Errorf("%s / %v: %v, want %v", tc.session, tc.sendErr, err, tc.want)
		}
	}
	res, err := NewNotificationHandler(newRuntime(&fakeChannel{}, &fakeChat{}), "Fake").Push(ctx,
		&gatewayv1.PushRequest{SessionId: "fake:U1", Messages: msgs, RetryKey: "r"})
	if err != nil || res.GetDelivered() != 1 {
		t.Fatalf("push %v %v", res, err)
	}
}

type memMarks map[string]bool

func (m memMarks) Done(_ context.Context, k string) (bool, error) { return m[k], nil }
func (m memMarks) Mark(_ context.Context, k string) error         { m[k] = true; return nil }

func TestOnce(t *testing.T) {
	o := NewOnce(memMarks{}, "fake", slog.New(slog.DiscardHandler))
	ctx := context.Background()
	calls := 0
	fail := errors.New("503")
	if err := o.Do(ctx, "k", func() error { calls++; return fail }); !errors.Is(err, fail) {
		t.Fatalf("err = %v", err)
	}
	for range 2 {
		if err := o.Do(ctx, "k", func() error { calls++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 2 {
		t.Fatalf("%d calls: a failed send is retried, a done one is not repeated", calls)
	}
}

// memOutbox is an outbox in memory that deduplicates send keys as the inbox does.
type memOutbox struct {
	events []inbox.Event
	seen   map[string]bool
	err    error
}

func (m *memOutbox) Append(_ context.Context, evs ...inbox.Event) (inbox.Result, error) {
	if m.err != nil {
		return inbox.Result{}, m.err
	}
	var res inbox.Result
	for _, ev := range evs {
		if m.seen[ev.ID] {
			res.Duplicate++
			continue
		}
		if m.seen == nil {
			m.seen = map[string]bool{}
		}
		m.seen[ev.ID] = true
		m.events = append(m.events, ev)
		res.Stored++
	}
	return res, nil
}

// TestOutbox: with an outbox, answers and notifications are stored under their send keys — once
// however often they are produced — and sent only by the outbox's handler, which retries what
// the channel could not take for a transient reason and gives up on what it refused.
func TestOutbox(t *testing.T) {
	ctx := context.Background()
	ch := &fakeChannel{}
	out := &memOutbox{}
	chat := &fakeChat{res: chatlink.Response{JobID: "job_20261121_004", Replies: []chatlink.Reply{{Text: "ok",
		Actions: []chatlink.Action{{Kind: chatlink.ActionApprove, JobID: "job_20261121_004"}}}}}}
	rt := newRuntimeWith(ch, chat, out)
	ev := delivery(t, Event{ID: "E1", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hi"}, 1)
	for range 2 { // the event is redelivered after its answer was stored
		if err := rt.Handle(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := rt.Notify(ctx, "fake:U1", "job_20261121_004", "k1", []chatlink.Reply{{Text: "結果"}}); err != nil || n != 1 {
		t.Fatalf("notify = %d, %v", n, err)
	}
	if len(ch.sends) != 0 {
		t.Fatalf("sent before the outbox delivered: %+v", ch.sends)
	}
	if len(out.events) != 2 || out.events[0].ID != "event:E1" || out.events[0].Key != "fake:U1" || out.events[1].ID != "notify:k1" ||
		out.events[0].Meta["traceparent"] == "" {
		t.Fatalf("outbox %+v", out.events)
	}
	// The channel is down: the send fails, retryably, and is tried again as attempt 2.
	ch.sendErr = errors.New("503 from the channel")
	answer := inbox.Delivery{Event: out.events[0], Attempt: 1}
	if err := rt.Deliver(ctx, answer); err == nil || inbox.IsPermanent(err) {
		t.Fatalf("transient send failure = %v", err)
	}
	ch.sendErr = nil
	answer.Attempt = 2
	if err := rt.Deliver(ctx, answer); err != nil {
		t.Fatal(err)
	}
	if err := rt.Deliver(ctx, inbox.Delivery{Event: out.events[1], Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if len(ch.sends) != 2 {
		t.Fatalf("sends %+v", ch.sends)
	}
	got, note := ch.sends[0], ch.sends[1]
	if got.key != "event:E1" || !got.to.InReply || got.to.Attempt != 2 || got.to.Event == nil || got.to.Event.ID != "E1" ||
		got.replies[0].Text != "ok" || len(strings.Split(got.replies[0].Actions[0].Trace, "-")) != 4 {
		t.Fatalf("answer sent as %+v", got)
	}
	if note.key != "notify:k1" || note.to.InReply || note.to.Event != nil || note.to.Native != "U1" || note.to.SessionID != "fake:U1" {
		t.Fatalf("notification sent as %+v", note)
	}
	// The channel refuses: permanent, so the outbox dead-letters it instead of retrying.
	ch.sendErr = fmt.Errorf("%w: 400", ErrPermanent)
	if err := rt.Deliver(ctx, answer); !inbox.IsPermanent(err) {
		t.Fatalf("refused send = %v", err)
	}
	if err := rt.Deliver(ctx, inbox.Delivery{Event: inbox.Event{ID: "x", Payload: []byte("{")}}); !inbox.IsPermanent(err) {
		t.Fatalf("undecodable outbound = %v", err)
	}
	// The outbox cannot be written: the event is retried, the push answered Unavailable.
	out.err = errors.New("redis down")
	if err := rt.Handle(ctx, delivery(t, Event{ID: "E2", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1"}, 1)); err == nil || inbox.IsPermanent(err) {
		t.Fatalf("outbox down while answering = %v", err)
	}
	_, err := NewNotificationHandler(rt, "Fake").Push(ctx, &gatewayv1.PushRequest{SessionId: "fake:U1", Messages: []*commonv1.ReplyMessage{{Text: "x"}}})
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("push with the outbox down = %v", err)
	}
}

// TestEventLinesNameTheEvent: what the runtime logs about an event names it (event_id, kind)
// before the line's own fields, and a level turned off writes nothing.
func TestEventLinesNameTheEvent(t *testing.T) {
	var buf bytes.Buffer
	rt := NewRuntime(&fakeChannel{}, RuntimeConfig{Locale: "en", Allow: NewAllowlist([]string{"U1"})}, &fakeChat{res: chatlink.Response{Replies: []chatlink.Reply{{Text: "ok"}}}},
		slog.New(slog.NewJSONHandler(&buf, nil)), sdktrace.NewTracerProvider(), propagation.TraceContext{})
	for _, ev := range []Event{{ID: "E1", Kind: KindMessage, UserID: "U1", Text: "hi"}, {ID: "E2", Kind: KindUnfollow, UserID: "U9"}} {
		if err := rt.Handle(context.Background(), delivery(t, ev, 1)); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{`"msg":"fake.answered","event_id":"E1","kind":"message","messages":1,`, `"msg":"fake.unfollow","event_id":"E2","kind":"unfollow","user_id":"U9"}`}
	if len(lines) != len(want) {
		t.Fatalf("log lines:\n%s", buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Fatalf("line %d = %s, want it to hold %s", i, lines[i], w)
		}
	}
	buf.Reset()
	rt = NewRuntime(&fakeChannel{}, RuntimeConfig{Locale: "en", Allow: NewAllowlist([]string{"U1"})}, &fakeChat{},
		slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError})), sdktrace.NewTracerProvider(), propagation.TraceContext{})
	if err := rt.Handle(context.Background(), delivery(t, Event{ID: "E3", Kind: KindUnfollow, UserID: "U9"}, 1)); err != nil || buf.Len() != 0 {
		t.Fatalf("err %v, logged %q at level error", err, buf.String())
	}
}
