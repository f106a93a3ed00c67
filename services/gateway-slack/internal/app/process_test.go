package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

type fakeSlack struct {
	posts    []string
	keys     map[string]string // send key -> ts of the post
	private  []string
	closed   []string
	failPost map[int]error // by post call number (0-based)
	lost     map[int]bool  // the post is made but its answer is lost (a 503)
	calls    int
	lookups  int
	closeErr error
}

func (f *fakeSlack) Post(_ context.Context, channel, thread string, m domain.OutMessage, key string) (string, error) {
	n := f.calls
	f.calls++
	if err := f.failPost[n]; err != nil {
		return "", err
	}
	f.posts = append(f.posts, channel+"/"+thread+":"+m.Text)
	if f.keys == nil {
		f.keys = map[string]string{}
	}
	f.keys[channel+"/"+thread+"/"+key] = fmt.Sprint("ts", n)
	if f.lost[n] {
		return "", errors.New("slack chat.postMessage: slack server error: 503")
	}
	return fmt.Sprint("ts", n), nil
}

func (f *fakeSlack) Posted(_ context.Context, channel, thread, key string) (string, error) {
	f.lookups++
	return f.keys[channel+"/"+thread+"/"+key], nil
}

func (f *fakeSlack) PostEphemeral(_ context.Context, channel, thread, user string, m domain.OutMessage) error {
	f.private = append(f.private, channel+"/"+thread+"@"+user+":"+m.Text)
	return nil
}

func (f *fakeSlack) Upload(_ context.Context, channel, thread string, img chatlink.Image, caption string) error {
	f.posts = append(f.posts, fmt.Sprintf("%s/%s:[%s %d bytes] %s", channel, thread, img.ContentType, len(img.Data), caption))
	return nil
}

func (f *fakeSlack) CloseButtons(_ context.Context, channel, ts, _, note string) error {
	if f.closeErr != nil {
		return f.closeErr
	}
	f.closed = append(f.closed, channel+"/"+ts+":"+note)
	return nil
}

type memMarks map[string]bool

func (m memMarks) Done(_ context.Context, k string) (bool, error) { return m[k], nil }
func (m memMarks) Mark(_ context.Context, k string) error         { m[k] = true; return nil }

type fakeChat struct {
	replies []domain.Reply
	err     error
	calls   int
	refuse  bool // a press is refused (not an approver, already decided)
}

// HandleMessage answers; a press is applied unless refuse is set.
func (f *fakeChat) HandleMessage(_ context.Context, req chatlink.Request) (chatlink.Response, error) {
	f.calls++
	return chatlink.Response{Replies: f.replies, ActionApplied: req.Action != nil && !f.refuse}, f.err
}

// newProc runs the Slack channel on the channel runtime, as the service does.
func newProc(chat channel.Chat, s Slack, m channel.Marks) *channel.Runtime {
	log := slog.New(slog.DiscardHandler)
	return channel.NewRuntime(New("ja", s, channel.NewOnce(m, "slack", log), log),
		channel.RuntimeConfig{Locale: "ja", Allow: channel.NewAllowlist([]string{"U1"})}, chat, log, noop.NewTracerProvider(), propagation.TraceContext{})
}

func deliver(t *testing.T, in domain.Inbound) inbox.Delivery {
	t.Helper()
	b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return inbox.Delivery{Event: inbox.Event{ID: in.EventID, Key: in.Key(), Payload: b}, Attempt: 1}
}

func TestRetryResumesWithoutRepeating(t *testing.T) {
	s := &fakeSlack{failPost: map[int]error{1: errors.New("503")}}
	chat := &fakeChat{replies: []domain.Reply{{Text: "one"}, {Text: "two"}}}
	p := newProc(chat, s, memMarks{})
	d := deliver(t, domain.Inbound{EventID: "Ev1", Kind: domain.KindMessage, Channel: "C1", ThreadTS: "1.0", UserID: "U1", Text: "hi"})
	if err := p.Handle(context.Background(), d); err == nil || inbox.IsPermanent(err) {
		t.Fatalf("first attempt: %v, want retryable", err)
	}
	if err := p.Handle(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.posts) != "[C1/1.0:one C1/1.0:two]" {
		t.Fatalf("posts %v", s.posts)
	}
}

// TestLostAnswerIsFoundNotReposted: a post Slack made but whose answer was lost is found by its
// send key when the send is retried, and not posted again; a first attempt looks nothing up.
func TestLostAnswerIsFoundNotReposted(t *testing.T) {
	s := &fakeSlack{lost: map[int]bool{1: true}}
	chat := &fakeChat{replies: []domain.Reply{{Text: "one"}, {Text: "two"}, {Text: "three"}}}
	p := newProc(chat, s, memMarks{})
	d := deliver(t, domain.Inbound{EventID: "Ev1", Kind: domain.KindMessage, Channel: "C1", ThreadTS: "1.0", UserID: "U1", Text: "hi"})
	if err := p.Handle(context.Background(), d); err == nil || inbox.IsPermanent(err) {
		t.Fatalf("first attempt: %v, want retryable", err)
	}
	if s.lookups != 0 {
		t.Fatalf("%d lookups on a first attempt", s.lookups)
	}
	d.Attempt = 2
	if err := p.Handle(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.posts) != "[C1/1.0:one C1/1.0:two C1/1.0:three]" {
		t.Fatalf("posts %v", s.posts)
	}
}

func TestHandleCases(t *testing.T) {
	approve := &domain.Action{Kind: chatlink.ActionApprove, JobID: "job_1"}
	for _, tc := range []struct {
		name       string
		in         domain.Inbound
		chatErr    error
		postErr    error
		closeErr   error
		wantPosts  int
		wantClosed int
		wantErr    string
		wantChat   int
	}{
		{name: "message", in: domain.Inbound{Kind: domain.KindMessage, UserID: "U1", Text: "x"}, wantPosts: 1, wantChat: 1},
		{name: "stranger", in: domain.Inbound{Kind: domain.KindMessage, UserID: "U9", Text: "x"}, wantPosts: 1},
		{name: "button closes buttons", in: domain.Inbound{Kind: domain.KindAction, UserID: "U1", Action: approve, MessageTS: "2.0"},
			wantPosts: 1, wantClosed: 1, wantChat: 1},
		{name: "deleted button message does not block the answer", in: domain.Inbound{Kind: domain.KindAction, UserID: "U1", Action: approve, MessageTS: "2.0"},
			closeErr: fmt.Errorf("%w: message_not_found", domain.ErrPermanent), wantPosts: 1, wantChat: 1},
		{name: "chat-mio permanent", in: domain.Inbound{Kind: domain.KindMessage, UserID: "U1"}, chatErr: fmt.Errorf("%w: x", domain.ErrPermanent),
			wantErr: "permanent", wantChat: 1},
		{name: "channel gone", in: domain.Inbound{Kind: domain.KindMessage, UserID: "U1"}, postErr: fmt.Errorf("%w: channel_not_found", domain.ErrPermanent),
			wantErr: "permanent", wantChat: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.EventID, tc.in.Channel, tc.in.ThreadTS = "Ev", "C1", "1.0"
			s := &fakeSlack{closeErr: tc.closeErr, failPost: map[int]error{0: tc.postErr}}
			chat := &fakeChat{replies: []domain.Reply{{Text: "ok"}}, err: tc.chatErr}
			err := newProc(chat, s, memMarks{}).Handle(context.Background(), deliver(t, tc.in))
			if (tc.wantErr == "permanent") != inbox.IsPermanent(err) || (tc.wantErr == "" && err != nil) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if len(s.posts) != tc.wantPosts || len(s.closed) != tc.wantClosed || chat.calls != tc.wantChat {
				t.Fatalf("posts %v closed %v chat calls %d", s.posts, s.closed, chat.calls)
			}
		})
	}
}

// A refused press keeps the buttons and is explained to the presser alone (ephemeral), never
// announced in the thread.
func TestRefusedPressIsAnsweredPrivately(t *testing.T) {
	s := &fakeSlack{}
	chat := &fakeChat{replies: []domain.Reply{{Text: "承認する権限がありません"}}, refuse: true}
	in := domain.Inbound{EventID: "Ev7", Kind: domain.KindAction, Channel: "C1", ThreadTS: "1.0", UserID: "U1",
		Action: &domain.Action{Kind: chatlink.ActionApprove, JobID: "job_1"}, MessageTS: "2.0"}
	p := newProc(chat, s, memMarks{})
	if err := p.Handle(context.Background(), deliver(t, in)); err != nil {
		t.Fatal(err)
	}
	if len(s.posts) != 0 || len(s.closed) != 0 || len(s.private) != 1 || s.private[0] != "C1/1.0@U1:承認する権限がありません" {
		t.Fatalf("posts %v closed %v private %v", s.posts, s.closed, s.private)
	}
}
