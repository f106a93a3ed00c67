package service_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/linetest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

const (
	testSecret = "test-channel-secret-0123456789abcdef"
	testToken  = "test-channel-access-token-abcdefghijklmnop"
	allowed    = "Uallowed000000000000000000000001"
	allowed2   = "Uallowed000000000000000000000002"
)

type harness struct {
	cfg service.Config
	url string
	// internal is the internal listener (notification API, metrics); url is the public one.
	internal string
	line     *linetest.Server
	chat     *chatlinktest.FakeChat
	redis    testinfra.RedisDB
	logs     *chatlinktest.SyncBuffer
	stream   string
}

func baseConfig(r testinfra.RedisDB, lineURL, chatURL string) service.Config {
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
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
	chat := chatlinktest.NewFakeChat()
	chatSrv := chatlinktest.Start(t, chat)
	cfg := baseConfig(r, line.URL, chatSrv.URL)
	logs := &chatlinktest.SyncBuffer{}
	cfg.LogWriter = logs
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener, cfg.PublicListener = ln, pub
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
		close(chat.Release)
	})
	h := &harness{cfg: cfg, url: "http://" + pub.Addr().String(), internal: "http://" + ln.Addr().String(), line: line, chat: chat, redis: r, logs: logs,
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
