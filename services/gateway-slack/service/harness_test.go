package service_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/baggage"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/slacktest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

const (
	testSecret = "test-signing-secret-0123456789abcdef"
	testToken  = "test-bot-token-abcdefghijklmnop"
	allowed    = "UALLOWED01"
	allowed2   = "UALLOWED02"
)

// fakeChat is chat-mio's ChatService as the gateway sees it. Texts steer it:
// "slow:<ms> …" answers late, "approve" asks for an approval, "block" waits until released,
// "fail:<n>" fails with Unavailable n times first.
type fakeChat struct {
	mu       sync.Mutex
	requests []*chatv1.HandleMessageRequest
	headers  map[string]http.Header // by event id: the trace and baggage each call carried
	failures map[string]int
	release  chan struct{}
	started  chan string
}

func newFakeChat() *fakeChat {
	return &fakeChat{failures: map[string]int{}, headers: map[string]http.Header{}, release: make(chan struct{}), started: make(chan string, 100)}
}

func (f *fakeChat) HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	if ci, ok := connect.CallInfoForHandlerContext(ctx); ok {
		f.headers[req.GetEventId()] = ci.RequestHeader().Clone()
	}
	f.mu.Unlock()
	select {
	case f.started <- req.GetEventId():
	default: // nobody is watching (benchmarks)
	}
	text := req.GetText()
	job := "job_20261121_001"
	switch {
	case strings.HasPrefix(text, "slow:"):
		var ms int
		fmt.Sscanf(text, "slow:%d", &ms)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case text == "block":
		select {
		case <-f.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case strings.HasPrefix(text, "fail:"):
		var n int
		fmt.Sscanf(text, "fail:%d", &n)
		f.mu.Lock()
		f.failures[req.GetEventId()]++
		failed := f.failures[req.GetEventId()]
		f.mu.Unlock()
		if failed <= n {
			return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("busy"))
		}
	case text == "invalid":
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("bad request"))
	case text == "approve":
		return &chatv1.HandleMessageResponse{JobId: job, Messages: []*commonv1.ReplyMessage{{
			Text: "承認が必要です: " + job + "\n変更: docs/README.md", JobId: job,
			Actions: []*commonv1.Action{
				{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE, JobId: job},
				{Kind: commonv1.ActionKind_ACTION_KIND_DENY, JobId: job},
			},
		}}}, nil
	}
	if a := req.GetAction(); a != nil {
		text = a.GetKind().String() + " " + a.GetJobId()
	}
	return &chatv1.HandleMessageResponse{JobId: job, Messages: []*commonv1.ReplyMessage{{Text: "echo: " + text, JobId: job}}}, nil
}

// traceOf returns the trace id and the baggage job_id of the last call for an event.
func (f *fakeChat) traceOf(t testing.TB, eventID string) (traceID, jobID string) {
	t.Helper()
	f.mu.Lock()
	h := f.headers[eventID]
	f.mu.Unlock()
	parts := strings.Split(h.Get("Traceparent"), "-")
	if len(parts) != 4 {
		t.Fatalf("call for %s carried traceparent %q", eventID, h.Get("Traceparent"))
	}
	b, err := baggage.Parse(h.Get("Baggage"))
	if err != nil {
		t.Fatalf("call for %s carried baggage %q: %v", eventID, h.Get("Baggage"), err)
	}
	return parts[1], b.Member(jobid.BaggageKey).Value()
}

func (f *fakeChat) Requests() []*chatv1.HandleMessageRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*chatv1.HandleMessageRequest(nil), f.requests...)
}

func (f *fakeChat) countEvent(id string) int {
	n := 0
	for _, r := range f.Requests() {
		if r.GetEventId() == id {
			n++
		}
	}
	return n
}

// startChat serves the fake over h2c, as the suite's clients speak it.
func startChat(t testing.TB, f *fakeChat) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(chatv1connect.NewChatServiceHandler(f))
	s := httptest.NewUnstartedServer(mux)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	s.Config.Protocols = &p
	s.Start()
	t.Cleanup(s.Close)
	return s
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	cfg    service.Config
	url    string
	slack  *slacktest.Server
	chat   *fakeChat
	redis  testinfra.RedisDB
	logs   *syncBuffer
	stream string
}

func start(t testing.TB, mutate func(*service.Config)) *harness {
	t.Helper()
	r := testinfra.Redis(t)
	api := slacktest.NewServer(testToken)
	t.Cleanup(api.Close)
	chat := newFakeChat()
	chatSrv := startChat(t, chat)
	cfg := service.DefaultConfig()
	cfg.Redis.Addr = r.Addr
	cfg.Redis.KeyPrefix = r.Prefix
	cfg.Services.ChatMio.URL = chatSrv.URL
	cfg.Slack.APIBaseURL = api.APIURL()
	cfg.Slack.AllowedUsers = []string{allowed, allowed2}
	cfg.Slack.SigningSecret = testSecret
	cfg.Slack.BotToken = testToken
	cfg.Slack.ChatTimeout = 10 * time.Second
	cfg.Slack.Inbox.Consumer = "test"
	cfg.Slack.Inbox.Block = 100 * time.Millisecond
	cfg.Slack.Inbox.MaxAttempts = 3
	logs := &syncBuffer{}
	cfg.LogWriter = logs
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener = ln
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- service.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("service.Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("gateway did not stop")
		}
		close(chat.release)
	})
	h := &harness{cfg: cfg, url: "http://" + ln.Addr().String(), slack: api, chat: chat, redis: r, logs: logs,
		stream: r.Prefix + "inbox:slack"}
	waitFor(t, "gateway ready", func() bool {
		res, err := http.Get(h.url + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return h
}

// event posts a signed Events API body.
func (h *harness) event(t testing.TB, body []byte, mutate func(*slacktest.Request)) (int, string) {
	t.Helper()
	r := slacktest.Request{URL: h.url + service.EventsPath, Secret: testSecret, Body: body, ContentType: "application/json"}
	if mutate != nil {
		mutate(&r)
	}
	code, text, err := slacktest.Do(http.DefaultClient, r)
	if err != nil {
		t.Fatal(err)
	}
	return code, text
}

// interact posts a signed interactivity body.
func (h *harness) interact(t testing.TB, body []byte) int {
	t.Helper()
	code, _, err := slacktest.Do(http.DefaultClient, slacktest.Request{URL: h.url + service.InteractivePath, Secret: testSecret,
		Body: body, ContentType: "application/x-www-form-urlencoded"})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func (h *harness) postsIn(channel, thread string) []slacktest.Post {
	var out []slacktest.Post
	for _, p := range h.slack.Posts() {
		if p.Method == "chat.postMessage" && p.Channel == channel && p.ThreadTS == thread {
			out = append(out, p)
		}
	}
	return out
}

func (h *harness) streamLen(t testing.TB) int64 {
	t.Helper()
	return h.redis.Client.XLen(context.Background(), h.stream).Val()
}

func (h *harness) pending(t testing.TB) int64 {
	t.Helper()
	return h.redis.Client.XPending(context.Background(), h.stream, service.Name).Val().Count
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
