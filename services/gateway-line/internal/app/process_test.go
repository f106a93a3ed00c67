package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

type call struct {
	kind, to, token, key string
	msgs                 []domain.OutMessage
}

type fakeLine struct {
	calls     []call
	replyErr  error
	pushErr   error
	loadCalls []string
	// sentBeforeLoading is how many replies and pushes each loading call came after.
	sentBeforeLoading []int
	// onLoading runs at each loading call.
	onLoading func()
}

func (f *fakeLine) Reply(_ context.Context, tok string, msgs []domain.OutMessage) error {
	f.calls = append(f.calls, call{kind: "reply", token: tok, msgs: msgs})
	return f.replyErr
}

func (f *fakeLine) Push(_ context.Context, to string, msgs []domain.OutMessage, key string) error {
	f.calls = append(f.calls, call{kind: "push", to: to, key: key, msgs: msgs})
	return f.pushErr
}

func (f *fakeLine) ShowLoading(_ context.Context, chatID string, _ int) error {
	f.loadCalls = append(f.loadCalls, chatID)
	if f.onLoading != nil {
		f.onLoading()
	}
	// Counted when the request is over: a reply sent while it was under way counts.
	f.sentBeforeLoading = append(f.sentBeforeLoading, len(f.calls))
	return errors.New("loading is best effort")
}

type fakeChat struct {
	err error
	req chatlink.Request
	// slow, when set, is waited for before the answer.
	slow <-chan struct{}
}

func (f *fakeChat) HandleMessage(_ context.Context, req chatlink.Request) (chatlink.Response, error) {
	f.req = req
	if f.slow != nil {
		select {
		case <-f.slow:
		case <-time.After(10 * time.Second):
			return chatlink.Response{}, errors.New("fakeChat: the loading animation was never asked for")
		}
	}
	if f.err != nil {
		return chatlink.Response{}, f.err
	}
	return chatlink.Response{JobID: "job_20261121_001", Replies: []domain.Reply{{Text: "ok"}}}, nil
}

// runtime runs the LINE channel on the channel runtime, as the service does.
func runtime(cfg Config, allowed []string, chat channel.Chat, line Messenger) *channel.Runtime {
	log := slog.New(slog.DiscardHandler)
	return channel.NewRuntime(New(cfg, line, log), channel.RuntimeConfig{Locale: cfg.Locale, Allow: channel.NewAllowlist(allowed)},
		chat, log, noop.NewTracerProvider(), propagation.TraceContext{})
}

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func delivery(t *testing.T, in domain.Inbound, redelivered bool, attempt int) inbox.Delivery {
	t.Helper()
	b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return inbox.Delivery{Event: inbox.Event{ID: in.EventID, Key: in.ChatID, Payload: b}, Redelivered: redelivered, Attempt: attempt}
}

func TestHandle(t *testing.T) {
	fresh := domain.Inbound{EventID: "E1", Kind: domain.KindText, SourceType: domain.SourceUser, UserID: "U1", ChatID: "U1",
		Text: "hi", ReplyToken: "rt", Timestamp: now.Add(-time.Second)}
	group := fresh
	group.SourceType, group.ChatID = domain.SourceGroup, "C1"
	postback := fresh
	postback.Kind, postback.Text, postback.PostbackData = domain.KindPostback, "", "a=deny&j=job_20261121_003"
	badPostback := fresh
	badPostback.Kind, badPostback.PostbackData = domain.KindPostback, "a=launch"
	stranger := fresh
	stranger.UserID, stranger.ChatID = "U9", "U9"
	key := domain.RetryKey("event:E1")
	for _, tc := range []struct {
		name        string
		in          domain.Inbound
		redelivered bool
		chatErr     error
		replyErr    error
		pushErr     error
		wantCalls   []string // kind:key-or-token
		wantErr     string   // "", "retry", "permanent"
		wantLoading bool
		wantAction  *domain.Action
	}{
		{name: "quick reply", in: fresh, wantCalls: []string{"reply:rt"}, wantLoading: true},
		{name: "reply token refused falls back to push", in: fresh, replyErr: domain.ErrReplyToken,
			wantCalls: []string{"reply:rt", "push:" + key}, wantLoading: true},
		{name: "reclaimed event pushes", in: fresh, redelivered: true, wantCalls: []string{"push:" + key}, wantLoading: true},
		{name: "group: no loading", in: group, wantCalls: []string{"reply:rt"}},
		{name: "chat-mio down is retried", in: fresh, chatErr: errors.New("unavailable"), wantErr: "retry", wantLoading: true},
		{name: "chat-mio refuses for good", in: fresh, chatErr: fmt.Errorf("%w: invalid", domain.ErrPermanent), wantErr: "permanent", wantLoading: true},
		{name: "LINE refuses the push for good", in: fresh, redelivered: true, pushErr: fmt.Errorf("%w: 400", domain.ErrPermanent),
			wantCalls: []string{"push:" + key}, wantErr: "permanent", wantLoading: true},
		{name: "postback becomes an action", in: postback, wantCalls: []string{"reply:rt"}, wantLoading: true,
			wantAction: &domain.Action{Kind: chatlink.ActionDeny, JobID: "job_20261121_003"}},
		{name: "unknown postback ignored", in: badPostback},
		{name: "stranger refused", in: stranger, wantCalls: []string{"reply:rt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := &fakeLine{replyErr: tc.replyErr, pushErr: tc.pushErr}
			chat := &fakeChat{err: tc.chatErr}
			p := runtime(Config{ReplyTokenMargin: 50 * time.Second, LoadingSeconds: 20, Locale: "ja",
				Now: func() time.Time { return now }}, []string{"U1"}, chat, line)
			err := p.Handle(context.Background(), delivery(t, tc.in, tc.redelivered, 1))
			if (tc.wantErr == "permanent") != inbox.IsPermanent(err) || (tc.wantErr == "") != (err == nil) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			var got []string
			for _, c := range line.calls {
				if c.kind == "reply" {
					got = append(got, "reply:"+c.token)
				} else {
					got = append(got, "push:"+c.key)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.wantCalls) {
				t.Fatalf("calls %v, want %v", got, tc.wantCalls)
			}
			if (len(line.loadCalls) > 0) != tc.wantLoading {
				t.Fatalf("loading calls %v", line.loadCalls)
			}
			if tc.wantAction != nil && (chat.req.Action == nil || *chat.req.Action != *tc.wantAction) {
				t.Fatalf("action %+v", chat.req.Action)
			}
		})
	}
}

// TestLoadingAfter: with LoadingAfter set, a quick answer comes without the loading animation; an
// answer that takes longer gets it, and the animation's request is over before the answer is
// sent. A failed event does not leave a timer behind.
func TestLoadingAfter(t *testing.T) {
	in := domain.Inbound{EventID: "E1", Kind: domain.KindText, SourceType: domain.SourceUser, UserID: "U1", ChatID: "U1",
		Text: "hi", ReplyToken: "rt", Timestamp: now.Add(-time.Second)}
	cfg := Config{ReplyTokenMargin: 50 * time.Second, LoadingSeconds: 20, Locale: "ja", Now: func() time.Time { return now }}
	t.Run("quick answer", func(t *testing.T) {
		cfg := cfg
		cfg.LoadingAfter = time.Hour
		line := &fakeLine{}
		if err := runtime(cfg, []string{"U1"}, &fakeChat{}, line).Handle(context.Background(), delivery(t, in, false, 1)); err != nil {
			t.Fatal(err)
		}
		if len(line.loadCalls) != 0 || len(line.calls) != 1 || line.calls[0].kind != "reply" {
			t.Fatalf("loading %v, calls %+v: want the reply alone", line.loadCalls, line.calls)
		}
	})
	t.Run("slow answer", func(t *testing.T) {
		cfg := cfg
		cfg.LoadingAfter = time.Millisecond
		loading := make(chan struct{})
		// The answer waits for the animation's request, which is still running when the
		// answer comes: the runtime must wait for it to end before sending.
		line := &fakeLine{}
		line.onLoading = func() {
			close(loading)
			time.Sleep(20 * time.Millisecond)
		}
		if err := runtime(cfg, []string{"U1"}, &fakeChat{slow: loading}, line).Handle(context.Background(), delivery(t, in, false, 1)); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(line.loadCalls) != "[U1]" || fmt.Sprint(line.sentBeforeLoading) != "[0]" || len(line.calls) != 1 {
			t.Fatalf("loading %v after %v sends, calls %+v: want one animation before the reply", line.loadCalls, line.sentBeforeLoading, line.calls)
		}
	})
	t.Run("image that cannot be fetched", func(t *testing.T) {
		// The event fails before chat-mio is asked; the animation's request under way is over
		// before Handle returns.
		cfg := cfg
		cfg.LoadingAfter = time.Millisecond
		loading := make(chan struct{})
		cfg.Contents = failingContents{after: loading}
		line := &fakeLine{}
		var over atomic.Bool
		line.onLoading = func() {
			close(loading)
			time.Sleep(20 * time.Millisecond)
			over.Store(true)
		}
		img := in
		img.Kind, img.Text, img.MessageID = domain.KindImage, "", "M1"
		chat := &fakeChat{}
		if err := runtime(cfg, []string{"U1"}, chat, line).Handle(context.Background(), delivery(t, img, false, 1)); err == nil {
			t.Fatal("no error for an image that could not be fetched")
		}
		if !over.Load() || len(line.loadCalls) != 1 || len(line.calls) != 0 || chat.req.EventID != "" {
			t.Fatalf("loading %v (over %v), calls %+v, chat asked %q", line.loadCalls, over.Load(), line.calls, chat.req.EventID)
		}
	})
}

// failingContents fails every download, once after is closed.
type failingContents struct{ after <-chan struct{} }

func (f failingContents) Content(context.Context, string, int64) (chatlink.InboundImage, error) {
	select {
	case <-f.after:
	case <-time.After(10 * time.Second):
	}
	return chatlink.InboundImage{}, errors.New("blob endpoint unavailable")
}

func TestNotifyKeys(t *testing.T) {
	line := &fakeLine{}
	p := runtime(Config{Locale: "ja"}, nil, &fakeChat{}, line)
	ctx := context.Background()
	replies := []domain.Reply{{Text: "結果"}}
	for range 2 {
		if _, err := p.Notify(ctx, "line:U1", "job_1", "", replies); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Notify(ctx, "line:U1", "job_1", "k1", replies); err != nil {
			t.Fatal(err)
		}
	}
	if line.calls[0].key != line.calls[2].key || line.calls[1].key != line.calls[3].key || line.calls[0].key == line.calls[1].key {
		t.Fatalf("keys %s %s %s %s", line.calls[0].key, line.calls[1].key, line.calls[2].key, line.calls[3].key)
	}
	if _, err := p.Notify(ctx, "line:U1", "job_1", "", []domain.Reply{{Text: "別の結果"}}); err != nil || line.calls[4].key == line.calls[0].key {
		t.Fatalf("different content got the same key (%v)", err)
	}
	for _, bad := range []string{"slack:C1:1", "line:", ""} {
		if _, err := p.Notify(ctx, bad, "", "", replies); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("Notify(%q) = %v", bad, err)
		}
	}
	if _, err := p.Notify(ctx, "line:U1", "", "", nil); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("empty notify = %v", err)
	}
}
