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
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/linetest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

const (
	testSecret = "test-channel-secret-0123456789"
	testToken  = "test-channel-access-token-abcdefghijklmnop"
	allowed    = "Uallowed000000000000000000000001"
	allowed2   = "Uallowed000000000000000000000002"
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
	line   *linetest.Server
	chat   *fakeChat
	redis  testinfra.RedisDB
	logs   *syncBuffer
	stream string
}

func baseConfig(r testinfra.RedisDB, lineURL, chatURL string) service.Config {
	cfg := service.DefaultConfig()
	cfg.Redis.Addr = r.Addr
	cfg.Redis.KeyPrefix = r.Prefix
	cfg.Services.ChatMio.URL = chatURL
	cfg.Line.APIBaseURL = lineURL
	cfg.Line.AllowedUsers = []string{allowed, allowed2}
	cfg.Line.ChannelSecret = testSecret
	cfg.Line.ChannelAccessToken = testToken
	cfg.Line.ChatTimeout = 10 * time.Second
	cfg.Line.Inbox.Consumer = "test"
	cfg.Line.Inbox.Block = 100 * time.Millisecond
	cfg.Line.Inbox.MaxAttempts = 3
	return cfg
}

func start(t testing.TB, mutate func(*service.Config)) *harness {
	t.Helper()
	r := testinfra.Redis(t)
	line := linetest.NewServer(testToken)
	t.Cleanup(line.Close)
	chat := newFakeChat()
	chatSrv := startChat(t, chat)
	cfg := baseConfig(r, line.URL, chatSrv.URL)
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
	h := &harness{cfg: cfg, url: "http://" + ln.Addr().String(), line: line, chat: chat, redis: r, logs: logs,
		stream: r.Prefix + "inbox:line"}
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

func (h *harness) post(t testing.TB, secret string, body []byte) int {
	t.Helper()
	res, err := linetest.Post(http.DefaultClient, h.url+service.WebhookPath, secret, body)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func (h *harness) sentTo(chatID string) []linetest.Sent {
	var out []linetest.Sent
	for _, s := range h.line.Sent() {
		if s.To == chatID || (s.Kind == "reply" && strings.Contains(s.ReplyToken, chatID)) {
			out = append(out, s)
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

func nowMillis() int64 { return time.Now().UnixMilli() }
