package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

func (f *fakeChannel) BeforeChat(_ context.Context, ev Event) { f.prepared = append(f.prepared, ev.ID) }

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
	return NewRuntime(ch, RuntimeConfig{Locale: "en", Allow: NewAllowlist([]string{"U1"})}, chat, slog.New(slog.DiscardHandler),
		sdktrace.NewTracerProvider(tp...), propagation.TraceContext{})
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

func TestHandle(t *testing.T) {
	approve := &chatlink.Action{Kind: chatlink.ActionApprove, JobID: "job_20261121_003"}
	answer := chatlink.Response{JobID: "job_20261121_003", ActionApplied: true, Replies: []chatlink.Reply{{Text: "ok",
		Actions: []chatlink.Action{{Kind: chatlink.ActionDeny, JobID: "job_20261121_003"}}}}}
	for _, tc := range []struct {
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
	}{
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
		t.Run(tc.name, func(t *testing.T) {
			ch := &fakeChannel{sendErr: tc.sendErr, finErr: tc.finErr}
			res := answer
			res.ActionApplied = !tc.refused
			chat := &fakeChat{res: res, err: tc.chatErr}
			err := newRuntime(ch, chat).Handle(context.Background(), delivery(t, tc.ev, 1))
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
		})
	}
	t.Run("undecodable event is permanent", func(t *testing.T) {
		err := newRuntime(&fakeChannel{}, &fakeChat{}).Handle(context.Background(), inbox.Delivery{Event: inbox.Event{ID: "x", Payload: []byte("{")}})
		if !inbox.IsPermanent(err) || !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
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
